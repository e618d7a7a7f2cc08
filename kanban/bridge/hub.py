"""Per-process fan-out of revision events and invalidations: the receiving side. What is
sent, and when (only after a commit), is ``kanban.bridge.publish``.

Each server process owns ONE channel on the channel layer. It joins the group of a project
while at least one local socket subscribes to it, so a write costs one layer message per
interested process rather than one per subscriber; the hub then fans out locally, encoding
each event once per alias. Access changes reach every process through one shared group, and
each hub re-checks only its affected subscriptions.

A re-imported plugin reloads the open boards of its project: the hub joins a board's group
while a local socket shows that board, and sends each such socket a host-only ``reload``.
The in-memory layer cannot hear another process (``import_project --watch`` runs in its
own), so with it the hub also polls the plugin versions of its open boards.

A cross-process layer can fail: Redis stops, or restarts empty and forgets every group. A
write then still commits; the publisher keeps what it could not send, and its hub sends it
again once the layer answers (a change as a resync of its project, for every worker's
subscribers). A hub whose groups are gone would hear nothing ever again. So the hub sends
itself a heartbeat through a group of its own; a failed layer call or a heartbeat that does
not come back marks the layer down. Once the groups can
be joined again, every local socket is re-checked (access changes were lost too) and each
surviving subscription gets ``revision: "resync"``, which plugins already treat as "re-read".
A layer under overload drops messages without failing a call (a channel past its
``capacity``): ``kanban.bridge.overflow`` finds each drop, and its subscribers resync. A
socket whose peer stops reading is held back and resynced likewise (``backpressure``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Iterable, Sequence
from typing import Any, Final
from uuid import UUID, uuid4

from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer

from kanban.bridge import backpressure, frames, overflow, subscription
from kanban.bridge.frames import Change
from kanban.bridge.overflow import RESYNC_CHANGE
from kanban.bridge.overflow import keep_undelivered as _keep_undelivered
from kanban.bridge.overflow import take_undelivered as _take_undelivered
from kanban.bridge.publish import ACCESS_GROUP, board_group
from kanban.bridge.subscription import (  # noqa: F401 (others import them from here)
    KINDS,
    ChangeKind,
    ReadRules,
    Socket,
    Subscription,
    send_each,
)
from kanban.data.change_groups import CHANGED, follower_layer, project_group, receive_forever
from kanban.observability.metrics import (
    DELIVERY,
    FANOUT,
    LAYER_DROPS,
    LAYER_FAILURES,
    LAYER_RECOVERIES,
)
from kanban.projects.plugin_files import plugin_versions
from storage.loops import PerLoop

logger = logging.getLogger(__name__)

#: channels_redis forgets group membership after a day; re-join well before that.
GROUP_REFRESH_SECONDS = 3600.0
#: How often a hub on the in-memory layer looks for re-imported plugins of its open boards.
PLUGIN_POLL_SECONDS = 1.0
#: How often a hub on a cross-process layer sends itself a heartbeat through its own group,
#: and how long one may take to come back before the layer counts as down. Only a layer that
#: restarted empty, without a single call failing, is found by the heartbeat alone; taking a
#: busy worker's late beat for that resyncs every socket at once, so the wait is generous.
HEARTBEAT_SECONDS = 1.0
HEARTBEAT_TIMEOUT = 10.0
#: How soon a hub retries a failed layer before it can rejoin its groups.
RECOVER_RETRY_SECONDS = 0.5
#: The revision a subscription hears when events may have been lost: re-read everything.
RESYNC_REVISION = RESYNC_CHANGE.revision


class Hub:
    def __init__(self) -> None:
        self.layer = follower_layer()
        self.channel: str | None = None
        self.by_target: dict[UUID, set[Subscription]] = defaultdict(set)
        self.sockets: set[Socket] = set()
        #: Open boards (consumer projects) -> their local sockets, and the plugin version
        #: each board's sockets were last told about.
        self.boards: dict[UUID, set[Socket]] = defaultdict(set)
        self.plugin_versions: dict[UUID, str] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._ready = asyncio.Lock()
        #: False from a failed layer call or a lost heartbeat until every group is rejoined.
        self.layer_ok = True
        #: A group of this hub alone: Redis forgetting groups shows as its heartbeat missing.
        self.beat_group = f"kanban.hub.beat.{uuid4().hex}"
        self.beat_seen = time.monotonic()
        #: Outages this hub recovered from (tests and logs read it).
        self.recoveries = 0
        #: One lock per project group: joining and leaving one group never interleave.
        self._group_locks: dict[UUID, asyncio.Lock] = defaultdict(asyncio.Lock)
        #: Numbers heard (changes per project, own beats): one skipped was dropped. Resyncs
        #: over dropped messages are counted in ``overflows``.
        self.gaps, self.beat_heard, self.overflows = overflow.Gaps(), 0, 0
        self._gap_sweep: asyncio.Task[None] | None = None
        #: Sockets whose peer stopped reading: events skipped, then one resync.
        self.slow = backpressure.SlowSockets(self._caught_up)

    async def _ensure_started(self) -> str:
        async with self._ready:
            if self.channel is None:
                assert self.layer is not None, "CHANNEL_LAYERS must configure a default layer"
                self.channel = await self.layer.new_channel("kanban.hub.")
                self._tasks = [
                    asyncio.create_task(self._listen()),
                    asyncio.create_task(self._refresh_groups()),
                ]
                if isinstance(self.layer, InMemoryChannelLayer):
                    # Groups live in this process: they cannot be lost while it runs.
                    await self.layer.group_add(ACCESS_GROUP, self.channel)
                    self._tasks.append(asyncio.create_task(self._poll_plugins()))
                else:
                    await self._layer_call(self._join_all(), "joining groups")
                    self.beat_seen = time.monotonic()
                    self._tasks.append(asyncio.create_task(self._watch_layer()))
            return self.channel

    async def _layer_call(self, call: Awaitable[Any], what: str) -> None:
        """A layer call whose failure must not fail the socket: the watchdog rejoins every
        group and resyncs every subscription once the layer is back."""
        try:
            await call
        except asyncio.CancelledError:
            raise
        except Exception:
            self._layer_failed(what)

    def _layer_failed(self, what: str) -> None:
        if self.layer_ok:
            logger.warning("channel layer failed (%s); will resync subscribers", what)
            LAYER_FAILURES.labels(what).inc()
        self.layer_ok = False

    async def _join_all(self) -> None:
        assert self.channel is not None
        await self.layer.group_add(ACCESS_GROUP, self.channel)
        if not isinstance(self.layer, InMemoryChannelLayer):
            await self.layer.group_add(self.beat_group, self.channel)
        for target in list(self.by_target):
            await self.layer.group_add(project_group(target), self.channel)
        for board in list(self.boards):
            await self.layer.group_add(board_group(board), self.channel)

    async def _watch_layer(self) -> None:
        beat = 0
        self.beat_seen = time.monotonic()  # the watch starts now, however late it started
        while True:
            if not self.layer_ok:
                await asyncio.sleep(RECOVER_RETRY_SECONDS)
                await self._recover()
                continue
            slept = time.monotonic()
            await asyncio.sleep(HEARTBEAT_SECONDS)
            late = time.monotonic() - slept - HEARTBEAT_SECONDS
            if late > HEARTBEAT_SECONDS:
                # This loop was too busy to run us on time (a thousand boards loading at
                # once), so it was too busy to hear the beat too: that is no sign of the
                # layer. Taking it for one resynced every socket, whose reloads kept the loop
                # busy: a resync storm. Time starts again once the loop keeps up.
                self.beat_seen = max(self.beat_seen, time.monotonic() - HEARTBEAT_SECONDS)
            elif time.monotonic() - self.beat_seen > HEARTBEAT_TIMEOUT:
                kept = await self._beat_group_kept()
                if kept:  # slow, not lost: the layer still holds this hub's groups
                    self.beat_seen = time.monotonic()
                else:
                    self._layer_failed("heartbeat lost" if kept is None else "groups forgotten")
                    continue
            beat += 1
            await self._layer_call(
                self.layer.group_send(self.beat_group, {"type": "hub.beat", "beat": beat}),
                "heartbeat",
            )
            if self.layer_ok:
                await self._resend_undelivered()

    async def _resend_undelivered(self) -> None:
        """Hand the layer again what this process's publishers could not: every hub in the
        group hears it, so a change lost on its way out still reaches their subscribers, as
        a resync."""
        for group, message in _take_undelivered():
            try:
                if await overflow.group_send_counting(self.layer, group, message):
                    _keep_undelivered(group, message)  # still full: again at the next beat
            except asyncio.CancelledError:
                _keep_undelivered(group, message)
                raise
            except Exception:
                _keep_undelivered(group, message)
                self._layer_failed("publish")
                return

    async def _beat_group_kept(self) -> bool | None:
        if self.channel is None:
            return None
        return await overflow.group_holds(self.layer, self.beat_group, self.channel)

    async def _recover(self) -> None:
        try:
            await self._join_all()
        except asyncio.CancelledError:
            raise
        except Exception:
            return  # still down; the watchdog tries again
        self.layer_ok = True
        self.beat_seen = time.monotonic()
        for target in list(self.gaps.joined):  # everything before now is resynced below
            self.gaps.join(target, time.time())
        self.recoveries += 1
        LAYER_RECOVERIES.inc()
        logger.warning("channel layer is back; resyncing %d sockets", len(self.sockets))
        self._hold_and_recheck({socket: [] for socket in self.sockets}, resync=True)

    async def add_socket(self, socket: Socket) -> None:
        channel = await self._ensure_started()
        self.sockets.add(socket)
        board = socket.consumer_id
        first = not self.boards[board]
        self.boards[board].add(socket)
        if first:
            await self._layer_call(self.layer.group_add(board_group(board), channel), "join")
            versions = await database_sync_to_async(plugin_versions)(project_ids=[board])
            if board in versions and self.boards.get(board):
                self.plugin_versions.setdefault(board, versions[board])

    async def remove_socket(self, socket: Socket) -> None:
        self.sockets.discard(socket)
        self.slow.forget(socket)
        board = self.boards.get(socket.consumer_id)
        if board is not None and socket in board:
            board.discard(socket)
            if not board:
                del self.boards[socket.consumer_id]
                self.plugin_versions.pop(socket.consumer_id, None)
                if self.channel is not None:
                    await self._layer_call(
                        self.layer.group_discard(board_group(socket.consumer_id), self.channel),
                        "leave",
                    )
        mine = [s for subs in self.by_target.values() for s in subs if s.socket is socket]
        for sub in mine:
            await self.unsubscribe(sub)

    async def subscribe(self, sub: Subscription) -> None:
        await self._ensure_started()
        subs = self.by_target[sub.target_id]
        first = not subs
        subs.add(sub)
        if first:
            await self._follow_target(sub.target_id)

    async def unsubscribe(self, sub: Subscription) -> None:
        subs = self.by_target.get(sub.target_id)
        if subs is None or sub not in subs:
            return
        subs.discard(sub)
        if not subs:
            del self.by_target[sub.target_id]
            await self._follow_target(sub.target_id)

    async def _follow_target(self, target: UUID) -> None:
        """Join or leave the target's group as its subscriptions now say. Under the
        target's lock and deciding only once inside it: a leave still in flight when a new
        subscription joins (the last one went, another came) would otherwise land after the
        join and leave the hub deaf to the target until the next refresh."""
        async with self._group_locks[target]:
            if self.channel is None:
                return
            group = project_group(target)
            if self.by_target.get(target):
                await self._layer_call(self.layer.group_add(group, self.channel), "join")
                if target not in self.gaps.joined:
                    self.gaps.join(target, time.time())
            else:
                await self._layer_call(self.layer.group_discard(group, self.channel), "leave")
                self.gaps.leave(target)

    async def _listen(self) -> None:
        assert self.channel is not None
        async for message in receive_forever(
            self.layer,
            self.channel,
            failed=lambda: self._layer_failed("receive"),
            retry_seconds=RECOVER_RETRY_SECONDS,
        ):
            try:
                if message.get("type") == "hub.beat":
                    self.beat_seen = time.monotonic()
                    await self._beat_heard(message.get("beat"))
                elif message.get("type") == "hub.dropped":
                    await self._dropped(message.get("groups", ()))
                elif message.get("type") == CHANGED:
                    target = UUID(message["project"])
                    changes = [Change(*change) for change in message["changes"]]
                    if self.gaps.heard(target, message, time.monotonic()):
                        self._overflowed(target)
                        changes.append(RESYNC_CHANGE)
                    elif self.gaps.pending() and self._gap_sweep is None:
                        self._gap_sweep = asyncio.create_task(self._sweep_gaps())
                    await self._deliver(target, changes)
                    if "at" in message:
                        DELIVERY.observe(max(0.0, time.time() - message["at"]))
                elif message.get("type") == "access.changed":
                    self._access_changed(message.get("projects", ()), message.get("users", ()))
                elif message.get("type") == "plugin.changed":
                    await self._plugin_changed(UUID(message["project"]), message["version"])
            except Exception:
                logger.exception("hub failed to handle %r", message.get("type"))

    def _overflowed(self, target: UUID) -> None:
        self.overflows += 1
        LAYER_DROPS.inc()
        self.gaps.resynced(target)
        logger.warning("change messages of %s were dropped; resyncing its subscribers", target)

    async def _resync(self, targets: Iterable[UUID]) -> None:
        for target in targets:
            self._overflowed(target)
            await self._deliver(target, [RESYNC_CHANGE])

    async def _sweep_gaps(self) -> None:
        """Resync the projects whose missing numbers did not turn up in time."""
        try:
            while self.gaps.pending():
                await asyncio.sleep(overflow.GAP_GRACE_SECONDS / 2)
                await self._resync(self.gaps.overdue(time.monotonic()))
        finally:
            self._gap_sweep = None

    async def _beat_heard(self, beat: Any) -> None:
        """A beat skipped: this hub's channel dropped messages, perhaps a project's last
        (no later number reveals it), so every followed project resyncs. Then read which
        groups the channel was too full for."""
        if type(beat) is not int:
            return
        skipped = self.beat_heard and beat > self.beat_heard + 1
        self.beat_heard = max(self.beat_heard, beat)
        if skipped:
            await self._dropped([self.beat_group])
        assert self.channel is not None
        try:
            dropped = await overflow.take_dropped(self.layer, self.channel)
        except Exception:
            self._layer_failed("reading dropped groups")
            return
        if dropped:
            # Resync only once everything queued before the drop has been delivered: an
            # older event after the re-read would put a subscriber behind again. So the
            # groups go through this channel too, behind whatever it still holds.
            note = {"type": "hub.dropped", "groups": sorted(dropped)}
            await self._layer_call(
                overflow.group_send_counting(self.layer, self.beat_group, note), "heartbeat"
            )

    async def _dropped(self, groups: Iterable[str]) -> None:
        """This hub's channel was too full to take messages of ``groups``: resync each
        followed project among them, every one when its own (a beat, a note) went missing,
        and re-check every socket when an access change did."""
        groups = set(groups)
        everything = self.beat_group in groups
        targets = [t for t in self.by_target if everything or project_group(t) in groups]
        await self._resync(targets)
        if ACCESS_GROUP in groups:
            self._hold_and_recheck({socket: [] for socket in self.sockets}, resync=False)

    async def _refresh_groups(self) -> None:
        while True:
            await asyncio.sleep(GROUP_REFRESH_SECONDS)
            with contextlib.suppress(Exception):
                await self._join_all()

    async def _poll_plugins(self) -> None:
        while True:
            await asyncio.sleep(PLUGIN_POLL_SECONDS)
            await self._resend_undelivered()  # what a full channel of this layer skipped
            await self._rejoin_if_expelled()
            if not self.boards:
                continue
            try:
                versions = await database_sync_to_async(plugin_versions)(
                    project_ids=list(self.boards)
                )
                for board, version in versions.items():
                    await self._plugin_changed(board, version)
            except Exception:
                logger.warning("plugin poll failed; retrying", exc_info=True)

    async def _rejoin_if_expelled(self) -> None:
        """The in-memory layer takes a channel out of every group once a message waited on
        it past ``expiry``: this hub would hear nothing again. Rejoin and resync all."""
        assert self.channel is not None
        if self.channel in self.layer.groups.get(ACCESS_GROUP, {}):
            return
        logger.warning("the in-memory layer dropped this hub's groups; rejoining")
        await self._join_all()
        self._hold_and_recheck({socket: [] for socket in self.sockets}, resync=True)

    async def _plugin_changed(self, board: UUID, version: str) -> None:
        """Reload the board's open iframes once per new version: the message and the poll
        may both report the same import."""
        sockets = self.boards.get(board)
        if not sockets or self.plugin_versions.get(board) == version:
            return
        self.plugin_versions[board] = version
        text = json.dumps(frames.reload_event())
        await send_each((s, text) for s in list(sockets))

    async def _deliver(self, target: UUID, changes: Sequence[Change]) -> None:
        subs = self.by_target.get(target)
        if not subs:
            return
        sends = subscription.event_texts(list(subs), changes)
        FANOUT.observe(len(sends))
        await send_each((socket, text) for socket, text in sends if self.slow.admits(socket))

    async def _caught_up(self, socket: Socket) -> None:
        """A socket held back (``backpressure``) is read again: whatever it skipped, each
        of its subscriptions re-reads."""
        subs = [sub for subs in self.by_target.values() for sub in subs if sub.socket is socket]
        await send_each(subscription.event_texts(subs, [RESYNC_CHANGE]))

    def _access_changed(self, projects: Iterable[str], users: Iterable[int]) -> None:
        project_ids = {UUID(p) for p in projects}
        user_ids = set(users)
        affected: dict[Socket, list[Subscription]] = {}
        for socket in self.sockets:
            if socket.user_id in user_ids or socket.consumer_id in project_ids:
                affected.setdefault(socket, [])  # the socket itself needs a re-check
        for target, target_subs in self.by_target.items():
            if target in project_ids:
                for sub in target_subs:
                    affected.setdefault(sub.socket, [])
        self._hold_and_recheck(affected, resync=False)

    def _hold_and_recheck(self, affected: dict[Socket, list[Subscription]], resync: bool) -> None:
        """Hold every subscription of the affected sockets until their re-check decides;
        with ``resync`` each one that survives it is told to re-read."""
        for target_subs in self.by_target.values():
            for sub in target_subs:
                if sub.socket in affected:
                    sub.held = sub.held or []  # hold events until the re-check decides
                    if resync:
                        sub.held.append(RESYNC_CHANGE)
                    affected[sub.socket].append(sub)
        for socket, socket_subs in affected.items():
            task = asyncio.create_task(socket.recheck(socket_subs))
            self._tasks.append(task)
            task.add_done_callback(self._tasks.remove)

    async def release(self, sub: Subscription, rules: ReadRules | None) -> None:
        """End a re-check: deliver held events under the new rules, or drop the subscription."""
        held, sub.held = sub.held or [], None
        if rules is None:
            await self.unsubscribe(sub)
            return
        sub.read, sub.knowledge_read = rules
        if self.slow.admits(sub.socket):
            await send_each(subscription.event_texts([sub], held))


_hubs: Final = PerLoop(Hub)


def get_hub() -> Hub:
    """The hub of the running event loop (one per server process)."""
    return _hubs.get()
