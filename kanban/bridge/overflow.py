"""Where a committed change can be lost on its way to a socket, and how each loss becomes a
``resync`` instead of a revision silently skipped.

The way from a commit to a socket, and where it can drop:

1. The publisher's ``group_send``: channels_redis writes the message into each member
   channel's sorted set, and skips a channel already holding ``capacity`` messages without
   a word (its Lua script only counts them, for a log line); the in-memory layer swallows
   its ``ChannelFull`` likewise. Here (``group_send_counting``) a full Redis channel records
   the group it missed in a set beside it, which its hub reads at each beat
   (``take_dropped``), whoever published; on the in-memory layer the publisher keeps the
   message as a resync of its project, which its hub sends again (``undelivered``).
2. The hub's channel: channels_redis deletes a message older than ``expiry`` at the next
   send; its per-process receive buffer drops the oldest past ``capacity``. The in-memory
   layer, on an expired message, takes the channel out of every group (the hub rejoins).
3. The hub's own queues never drop: the undelivered messages collapse into one resync per
   group, and a subscription's ``held`` events into one resync past ``MAX_HELD``
   (``kanban.bridge.subscription``).
4. A socket's send buffer (Twisted's, unbounded): past ``KANBAN_SOCKET_BUFFER_BYTES`` left
   unread by its peer, the socket's events are skipped and, once it reads again, each of
   its subscriptions resyncs (``kanban.bridge.backpressure``).

Whatever drops, a receiver can also tell by numbers: each change message carries its
publisher's number for that group (``stamp``) and the time of its previous one. A hub that
hears number 7 after 5 waits briefly for 6 (two threads of one process may send out of
order), then tells that project's subscribers to resync (``Gaps``); a first message whose
previous one was published after this hub joined the group says the same. The last message
of a burst has no successor to reveal it: that one is for step 1's record, and the hub's own
beats are numbered too.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer

from kanban.bridge.frames import Change

logger = logging.getLogger(__name__)

#: Held for a subscription whose events may have been lost: re-read everything.
RESYNC_CHANGE: Final = Change("resync", "", "resync")
#: How long a missing number may be late (sent out of order by another thread of its
#: publisher) before its project's subscribers are told to resync.
GAP_GRACE_SECONDS: Final = 1.0
#: A jump past this many numbers resyncs at once instead of waiting for each one.
MAX_MISSING: Final = 1000


class _Numbering:
    """Each group's next number and last send time, for this process's publishers (which
    run in threads). A forked child starts its own numbering under a new origin: sharing
    the parent's would look like numbers arriving twice."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid = -1
        self.origin = ""
        self.groups: dict[str, tuple[int, float]] = {}

    def stamp(self, group: str, at: float) -> dict[str, Any]:
        with self.lock:
            if self.pid != os.getpid():
                self.pid, self.origin, self.groups = os.getpid(), uuid.uuid4().hex, {}
            seq, prev = self.groups.get(group, (0, None))
            self.groups[group] = (seq + 1, at)
            return {"origin": self.origin, "seq": seq + 1, "prev": prev}


_numbering = _Numbering()


def stamp(group: str, at: float) -> dict[str, Any]:
    """The fields that number a message of ``group`` sent at ``at`` (wall clock): its
    publisher (``origin``), its number there (``seq``) and when the previous one was sent
    (``prev``, None for the first)."""
    return _numbering.stamp(group, at)


@dataclass
class _Stream:
    """What one hub heard of one publisher on one project's group."""

    first: int
    last: int
    #: Numbers not heard yet -> when to stop waiting for them (monotonic).
    missing: dict[int, float] = field(default_factory=dict)


class Gaps:
    """A hub's record, per followed project and publisher, of the numbers it heard."""

    def __init__(self) -> None:
        self.joined: dict[UUID, float] = {}
        self.streams: dict[UUID, dict[str, _Stream]] = {}
        #: The projects that may have a number missing: each message asks whether any
        #: does, and a hub may follow thousands.
        self.waiting: set[UUID] = set()

    def join(self, target: UUID, at: float) -> None:
        """The hub is in ``target``'s group since ``at`` (wall clock): whatever was published
        after it must arrive."""
        self.joined[target] = at
        self.streams.pop(target, None)
        self.waiting.discard(target)

    def leave(self, target: UUID) -> None:
        self.joined.pop(target, None)
        self.streams.pop(target, None)
        self.waiting.discard(target)

    def heard(self, target: UUID, message: Mapping[str, Any], now: float) -> bool:
        """Record a change message of ``target``; True when something before it is lost for
        sure (resync now). A missing number waits ``GAP_GRACE_SECONDS`` (see ``overdue``)."""
        joined = self.joined.get(target)
        origin, seq, prev = message.get("origin"), message.get("seq"), message.get("prev")
        if joined is None or not isinstance(origin, str) or type(seq) is not int:
            return False
        streams = self.streams.setdefault(target, {})
        stream = streams.get(origin)
        lost = self._heard(streams, stream, origin, seq, prev, joined, now)
        if not lost and streams[origin].missing:
            self.waiting.add(target)
        return lost

    def _heard(
        self,
        streams: dict[str, _Stream],
        stream: _Stream | None,
        origin: str,
        seq: int,
        prev: Any,
        joined: float,
        now: float,
    ) -> bool:
        before_lost = isinstance(prev, int | float) and prev >= joined
        if stream is None:
            streams[origin] = stream = _Stream(seq, seq)
            return self._expect(stream, range(seq - 1, seq) if before_lost else range(0), now)
        if seq > stream.last:
            lost = self._expect(stream, range(stream.last + 1, seq), now)
            stream.last = seq
            return lost
        if stream.missing.pop(seq, None) is not None:
            return False
        if seq < stream.first:
            # Heard late, before the first one heard: it was sent after the join, and so
            # was everything after it (and the one before it, if ``prev`` says so).
            lost = self._expect(stream, range(seq + 1, stream.first), now)
            stream.first = seq
            return (
                self._expect(stream, range(seq - 1, seq) if before_lost else range(0), now) or lost
            )
        return False  # a duplicate: a kept message sent again

    def _expect(self, stream: _Stream, numbers: range, now: float) -> bool:
        if len(numbers) + len(stream.missing) > MAX_MISSING:
            stream.missing.clear()
            return True
        deadline = now + GAP_GRACE_SECONDS
        for number in numbers:
            if number > 0:
                stream.missing.setdefault(number, deadline)
        return False

    def pending(self) -> bool:
        return bool(self.waiting)

    def overdue(self, now: float) -> set[UUID]:
        """The projects with a number not heard in time, forgetting their missing numbers:
        the resync their subscribers get covers every one."""
        late: set[UUID] = set()
        for target in list(self.waiting):
            streams = self.streams.get(target, {}).values()
            if any(d <= now for s in streams for d in s.missing.values()):
                late.add(target)
                self.resynced(target)
            elif not any(s.missing for s in streams):
                self.waiting.discard(target)  # every one turned up
        return late

    def resynced(self, target: UUID) -> None:
        """Every subscriber of ``target`` re-reads: nothing still missing matters."""
        for s in self.streams.get(target, {}).values():
            s.missing.clear()
        self.waiting.discard(target)


async def group_send_counting(layer: Any, group: str, *messages: dict[str, Any]) -> int:
    """``layer.group_send`` of each of ``messages`` in turn, answering how many times a member
    channel was full and skipped one. A layer this does not know is trusted to deliver (0)."""
    if isinstance(layer, InMemoryChannelLayer):
        return sum([await _in_memory_group_send(layer, group, m) for m in messages])
    if hasattr(layer, "_map_channel_keys_to_connection") and hasattr(layer, "_group_key"):
        return await _redis_group_send(layer, group, messages)
    for message in messages:
        await layer.group_send(group, message)
    return 0


async def _in_memory_group_send(
    layer: InMemoryChannelLayer, group: str, message: dict[str, Any]
) -> int:
    layer._clean_expired()  # as its group_send does first
    full = 0
    for channel in list(layer.groups.get(group, {})):
        try:
            await layer.send(channel, message)
        except ChannelFull:
            full += 1
    return full


#: channels_redis's group send script (4.x), which counts the channels over capacity (its
#: group_send only logs the count), for several messages at once, each with a score of its
#: own so that a channel gives them out in the order sent. Here a full channel also records
#: the group it missed in a set beside it (``DROPPED_SUFFIX``), which the channel's hub
#: reads at its next beat. It drops each channel's expired messages first, as channels_redis
#: does in a MULTI/EXEC of its own before it: one round trip instead of two, and on the
#: channel's own shard (channels_redis sends that pipeline to the group's).
#: ARGV: each message's payload per key (message by message), each key's capacity, each
#: message's score, then the count of messages, the expiry, the score before which a
#: message has expired, and the group.
_GROUP_SEND_LUA: Final = """
    local over_capacity = 0
    local n = tonumber(ARGV[#ARGV - 3])
    local expiry = ARGV[#ARGV - 2]
    local expired_before = ARGV[#ARGV - 1]
    local group = ARGV[#ARGV]
    local k = #KEYS
    local capacities = n * k
    local scores = capacities + k
    for i=1,k do
        redis.call('ZREMRANGEBYSCORE', KEYS[i], 0, expired_before)
        local held = redis.call('ZCOUNT', KEYS[i], '-inf', '+inf')
        local capacity = tonumber(ARGV[capacities + i])
        local added, dropped = 0, 0
        for m=0,n-1 do
            if held < capacity then
                redis.call('ZADD', KEYS[i], ARGV[scores + m + 1], ARGV[m * k + i])
                held = held + 1
                added = added + 1
            else
                dropped = dropped + 1
            end
        end
        if added > 0 then
            redis.call('EXPIRE', KEYS[i], expiry)
        end
        if dropped > 0 then
            over_capacity = over_capacity + dropped
            redis.call('SADD', KEYS[i] .. ':dropped', group)
            redis.call('EXPIRE', KEYS[i] .. ':dropped', 3600)
        end
    end
    return over_capacity
"""
#: A group's members less the ones that stopped renewing, as channels_redis's group_send
#: reads them first (a ZREMRANGEBYSCORE, then a ZRANGE): in one round trip.
_GROUP_MEMBERS_LUA: Final = """
    redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, ARGV[1])
    return redis.call('ZRANGE', KEYS[1], 0, -1)
"""
#: Beside a channel's sorted set: the groups whose messages it was too full to take (kept an
#: hour: a hub reads its own every second, and one gone that long is read by no one).
DROPPED_SUFFIX: Final = ":dropped"
#: Apart in a channel's scores, the messages of one send (its sorted set gives them out
#: lowest first): a microsecond, which a double near today's Unix time still tells apart.
_SCORE_STEP: Final = 1e-6


async def _redis_group_send(layer: Any, group: str, messages: Sequence[dict[str, Any]]) -> int:
    """Seam: channels_redis's ``RedisChannelLayer.group_send`` (4.3), with its own helpers
    and the same Redis commands, but for several messages at once, two round trips a shard
    (each step in one script) however many there are; and a full channel records the group
    it missed, and the count of them is returned rather than logged. Pinned against a real
    Redis in tests/kanban/bridge/test_overload.py."""
    if not messages:
        return 0
    key = layer._group_key(group)
    now = time.time()
    members = layer.connection(layer.consistent_hash(group))
    stale = int(now) - layer.group_expiry
    channel_names = [
        x.decode("utf8") for x in await members.eval(_GROUP_MEMBERS_LUA, 1, key, stale)
    ]
    mapped = [layer._map_channel_keys_to_connection(channel_names, m) for m in messages]
    by_connection, _, capacities = mapped[0]  # the same for each: they name the same channels
    scores = [now + n * _SCORE_STEP for n in range(len(messages))]
    tail = [len(messages), layer.expiry, int(now) - int(layer.expiry), group]
    full = 0
    for index, channel_keys in by_connection.items():
        payloads = [payload[k] for _, payload, _ in mapped for k in channel_keys]
        args = [*payloads, *(capacities[k] for k in channel_keys), *scores, *tail]
        connection = layer.connection(index)
        full += int(await connection.eval(_GROUP_SEND_LUA, len(channel_keys), *channel_keys, *args))
    return full


async def take_dropped(layer: Any, channel: str) -> set[str]:
    """The groups whose messages ``channel`` (a hub's, on channels_redis) was too full to
    take since the last call; empty on any other layer. Seam: the channel's key and shard
    as channels_redis derives them for a process-local channel."""
    if not hasattr(layer, "non_local_name") or not hasattr(layer, "_group_key"):
        return set()
    name = layer.non_local_name(channel)
    connection = layer.connection(layer.consistent_hash(name))
    taken = await connection.spop(layer.prefix + name + DROPPED_SUFFIX, 100_000)
    return {group.decode("utf8") for group in taken or ()}


async def group_holds(layer: Any, group: str, channel: str) -> bool | None:
    """Whether the layer still holds ``channel`` in ``group`` (a hub in its own beat group):
    True for a layer that is only slow (beats late behind a busy worker), False for one that
    restarted empty, None when it cannot say (or fails to answer).

    Seam: channels_redis keeps a group as a sorted set of channel names under
    ``layer._group_key(group)``, on the shard ``layer.consistent_hash(group)``; this reads
    that set's one member. Pinned in tests/kanban/bridge/test_scale_out.py."""
    key_of = getattr(layer, "_group_key", None)
    if key_of is None:
        return None
    try:
        connection = layer.connection(layer.consistent_hash(group))
        return await connection.zscore(key_of(group), channel) is not None
    except asyncio.CancelledError:
        raise
    except Exception:
        return None


_pending_lock = threading.Lock()
#: What this process's publishers could not hand to the layer (or the layer skipped), by
#: group, until its hub sends it again: a lost change as a resync of its project, a lost
#: access change with every project and user it named (publishers run in threads).
_undelivered: dict[str, dict[str, Any]] = {}


def keep_undelivered(group: str, message: dict[str, Any]) -> None:
    with _pending_lock:
        kept = _undelivered.get(group)
        if message.get("type") == "kv.changed":
            message = {**message, "changes": [list(RESYNC_CHANGE)]}
        elif message.get("type") == "access.changed" and kept is not None:
            message = {
                **message,
                "projects": sorted({*kept["projects"], *message["projects"]}),
                "users": sorted({*kept["users"], *message["users"]}),
            }
        _undelivered[group] = message


def take_undelivered() -> list[tuple[str, dict[str, Any]]]:
    with _pending_lock:
        taken = list(_undelivered.items())
        _undelivered.clear()
    return taken


async def send_or_keep(layer: Any, group: str, *messages: dict[str, Any]) -> None:
    """Send each of ``messages`` in turn, or keep them for the hub to send again: when the
    layer fails (the writes committed; their subscribers must still learn of them, and the
    writes must not fail), and when a member channel was full and skipped one."""
    try:
        full = await group_send_counting(layer, group, *messages)
    except Exception:
        kinds = sorted({str(m.get("type")) for m in messages})
        logger.warning("could not publish %s to %s; kept", ", ".join(kinds), group)
        for message in messages:
            keep_undelivered(group, message)
        return
    if full and isinstance(layer, InMemoryChannelLayer):
        logger.warning("%d channels of %s were full; kept to resend as a resync", full, group)
        for message in messages:
            keep_undelivered(group, message)
    elif full:
        # channels_redis's full channels recorded the group; their hubs resync it.
        logger.info("%d channels of %s were full; their hubs will resync", full, group)
