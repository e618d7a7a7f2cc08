"""Where a committed change can be lost on its way to a socket, and how each loss becomes a
``resync`` instead of a revision silently skipped.

The way from a commit to a socket, and where it can drop:

1. The publisher's ``group_send``: channels_redis writes the message into each member
   channel's sorted set, and skips a channel already holding ``capacity`` messages without
   a word (its Lua script only counts them, for a log line). The in-memory layer swallows
   its ``ChannelFull`` likewise. ``group_send_counting`` sends as the layer does and says how
   many channels were skipped; the publisher then keeps the message as a resync of its
   project, which its hub sends again (``undelivered``), as after a failed send.
2. The hub's channel: channels_redis deletes a message older than ``expiry`` at the next
   send; its per-process receive buffer drops the oldest past ``capacity``. The in-memory
   layer, on an expired message, takes the channel out of every group.
3. The hub's own queues (a subscription's ``held`` events, the undelivered messages) and a
   socket's send buffer (Twisted's) never drop: they hold or collapse into a resync.

Whatever drops in 1 or 2, a receiver can tell: each change message carries its publisher's
number for that group (``stamp``), and the time of its previous one. A hub that hears
number 7 after 5 waits briefly for 6 (two threads of one process may send out of order),
then tells that project's subscribers to resync (``Gaps``). A first message whose previous
one was published after this hub joined the group says the same of the one before it. The
last message of a burst has no successor to reveal it: that one is step 1's to catch, and
the hub's own heartbeats, numbered too, show its channel dropped anything at all.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Mapping
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

    def join(self, target: UUID, at: float) -> None:
        """The hub is in ``target``'s group since ``at`` (wall clock): whatever was published
        after it must arrive."""
        self.joined[target] = at
        self.streams.pop(target, None)

    def leave(self, target: UUID) -> None:
        self.joined.pop(target, None)
        self.streams.pop(target, None)

    def heard(self, target: UUID, message: Mapping[str, Any], now: float) -> bool:
        """Record a change message of ``target``; True when something before it is lost for
        sure (resync now). A missing number waits ``GAP_GRACE_SECONDS`` (see ``overdue``)."""
        joined = self.joined.get(target)
        origin, seq, prev = message.get("origin"), message.get("seq"), message.get("prev")
        if joined is None or not isinstance(origin, str) or type(seq) is not int:
            return False
        streams = self.streams.setdefault(target, {})
        stream = streams.get(origin)
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
        return any(s.missing for streams in self.streams.values() for s in streams.values())

    def overdue(self, now: float) -> set[UUID]:
        """The projects with a number not heard in time, forgetting their missing numbers:
        the resync their subscribers get covers every one."""
        late: set[UUID] = set()
        for target, streams in self.streams.items():
            if any(d <= now for s in streams.values() for d in s.missing.values()):
                late.add(target)
                for s in streams.values():
                    s.missing.clear()
        return late

    def resynced(self, target: UUID) -> None:
        """Every subscriber of ``target`` re-reads: nothing still missing matters."""
        for s in self.streams.get(target, {}).values():
            s.missing.clear()


async def group_send_counting(layer: Any, group: str, message: dict[str, Any]) -> int:
    """``layer.group_send``, answering how many member channels were full and skipped. A
    layer this does not know is trusted to deliver (0)."""
    if isinstance(layer, InMemoryChannelLayer):
        return await _in_memory_group_send(layer, group, message)
    if hasattr(layer, "_map_channel_keys_to_connection") and hasattr(layer, "_group_key"):
        return await _redis_group_send(layer, group, message)
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


#: channels_redis's group send script (4.x), unchanged: it already counts the channels
#: over capacity; its group_send only logs the count.
_GROUP_SEND_LUA: Final = """
    local over_capacity = 0
    local current_time = ARGV[#ARGV - 1]
    local expiry = ARGV[#ARGV]
    for i=1,#KEYS do
        if redis.call('ZCOUNT', KEYS[i], '-inf', '+inf') < tonumber(ARGV[i + #KEYS]) then
            redis.call('ZADD', KEYS[i], current_time, ARGV[i])
            redis.call('EXPIRE', KEYS[i], expiry)
        else
            over_capacity = over_capacity + 1
        end
    end
    return over_capacity
"""


async def _redis_group_send(layer: Any, group: str, message: dict[str, Any]) -> int:
    """Seam: channels_redis's ``RedisChannelLayer.group_send`` (4.3), step for step and with
    its own helpers, returning the script's count instead of logging it. Pinned against a
    real Redis in tests/kanban/bridge/test_overload.py."""
    key = layer._group_key(group)
    connection = layer.connection(layer.consistent_hash(group))
    await connection.zremrangebyscore(key, min=0, max=int(time.time()) - layer.group_expiry)
    channel_names = [x.decode("utf8") for x in await connection.zrange(key, 0, -1)]
    by_connection, messages, capacities = layer._map_channel_keys_to_connection(
        channel_names, message
    )
    full = 0
    for index, channel_keys in by_connection.items():
        pipe = connection.pipeline()
        for channel_key in channel_keys:
            pipe.zremrangebyscore(channel_key, min=0, max=int(time.time()) - int(layer.expiry))
        await pipe.execute()
        args = [messages[k] for k in channel_keys] + [capacities[k] for k in channel_keys]
        args += [time.time(), layer.expiry]
        connection = layer.connection(index)
        full += int(await connection.eval(_GROUP_SEND_LUA, len(channel_keys), *channel_keys, *args))
    return full


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


async def send_or_keep(layer: Any, group: str, message: dict[str, Any]) -> None:
    """Send, or keep for the hub to send again: when the layer fails (the write committed;
    its subscribers must still learn of it, and the write must not fail), and when a member
    channel was full and skipped."""
    try:
        full = await group_send_counting(layer, group, message)
    except Exception:
        logger.warning("could not publish %s to %s; kept", message.get("type"), group)
        keep_undelivered(group, message)
        return
    if full:
        logger.warning(
            "%d channels of %s were full; %s kept to resend as a resync",
            full,
            group,
            message.get("type"),
        )
        keep_undelivered(group, message)
