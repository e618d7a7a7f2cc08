"""The sending side of the bridge's events: what a committed change, an access change, a
re-imported plugin or a new notification puts on the channel layer, and to which group.

Nothing here runs before a commit. The data and access services announce their changes
through ``storage.events`` (``send_on_commit``) and the KV listener, which hold them until
the transaction commits and drop them when it rolls back; ``kanban.bridge.wiring`` turns
those announcements into the calls below. The receiving side, each process's fan-out to
its sockets, is ``kanban.bridge.hub``.

A send the layer cannot take is kept (``kanban.bridge.overflow``): the write has committed
all the same, and the hub hands the kept message to the layer again once it answers.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import itertools
import logging
import os
import time
from collections.abc import Iterable, Sequence
from typing import Any, Final, cast
from uuid import UUID

from asgiref.sync import SyncToAsync, async_to_sync
from channels.layers import get_channel_layer

from kanban.bridge import overflow
from kanban.bridge.frames import Change
from kanban.bridge.overflow import send_or_keep
from kanban.data.change_groups import CHANGED, project_group
from storage.loops import PerLoop

ACCESS_GROUP = "kanban.access"

logger = logging.getLogger(__name__)

#: How long a thread waits for its loop to send an access, inbox or plugin message: longer
#: than the layer's own socket timeout (30 s, settings.CHANNEL_LAYERS), so only a loop that
#: will never run the send (a worker stopping) makes it give up.
SEND_WAIT_SECONDS: Final = 35.0


def board_group(project_id: UUID) -> str:
    """A board's open iframes, told to reload when its plugin is imported again."""
    return f"kanban.board.{project_id}"


def inbox_group(user_id: int) -> str:
    """A person's open pages (``kanban.bridge.inbox``), told when their inbox changed."""
    return f"kanban.inbox.{user_id}"


_pending_sends: set[asyncio.Task[None]] = set()
#: A message a worker thread handed its loop: (layer, group, message, what its sender waits
#: on, or None when it does not wait).
_Queued = tuple[Any, str, dict[str, Any], "concurrent.futures.Future[None] | None"]


def _group_send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is not None:
        # Called from a thread that runs an event loop (sync code inside async code):
        # async_to_sync cannot run here, so hand the send to that loop.
        task = loop.create_task(send_or_keep(layer, group, message))
        _pending_sends.add(task)
        task.add_done_callback(_pending_sends.discard)
        return
    worker = _worker_loop()
    if worker is None:
        async_to_sync(send_or_keep)(layer, group, message)
        return
    # A bridge, REST or MCP call in the worker's thread pool: the worker's own loop sends,
    # in order per group (``_Outbox``). A committed change's thread does not wait for
    # Redis's round trips (they were most of a lone write's time after its commit, bench
    # B2) unless its loop holds ``MAX_UNSENT`` already; every other message still waits, as
    # a revoked grant's sender expects its sockets to be told before it answers.
    outbox = _outboxes.of(worker)
    backlog = outbox is not None and outbox.unsent >= MAX_UNSENT
    done: concurrent.futures.Future[None] | None = (
        None if message.get("type") == CHANGED and not backlog else concurrent.futures.Future()
    )
    worker.call_soon_threadsafe(_outbox_put, layer, group, message, done)
    if done is None:
        return
    try:
        done.result(timeout=SEND_WAIT_SECONDS)
    except concurrent.futures.TimeoutError:
        # What it announces has committed either way; the thread answers its caller rather
        # than hang until the process is killed, and says what it could not confirm.
        logger.warning(
            "%s for %s was not sent within %.0f s", message.get("type"), group, SEND_WAIT_SECONDS
        )


def _worker_loop() -> asyncio.AbstractEventLoop | None:
    """The running event loop that handed this thread its call, if any. Seam: asgiref's
    ``sync_to_async`` records it in ``SyncToAsync.threadlocal`` (with the process id), as
    its own ``async_to_sync`` reads it. Pinned in tests/kanban/bridge/test_publish.py."""
    local = SyncToAsync.threadlocal
    loop = getattr(local, "main_event_loop", None)
    if loop is None or getattr(local, "main_event_loop_pid", None) != os.getpid():
        return None
    if loop.is_closed() or not loop.is_running():
        return None
    return cast(asyncio.AbstractEventLoop, loop)


class _Outbox:
    """One loop's messages handed over by its threads, sent in order per group: a group's
    numbering (``overflow.stamp``) and a key's revisions reach the hubs in the order the
    publishers committed them, and different groups do not wait for each other. What queued
    while a group's send was on its way goes out together in the next (at most
    ``MAX_BATCH``): a busy board's sender takes more at a time rather than fall behind, as
    one message after another would when its writers outpace Redis's round trips."""

    def __init__(self) -> None:
        self.queues: dict[str, collections.deque[_Queued]] = {}
        #: Messages put and not yet sent, over every group (read by the threads).
        self.unsent = 0

    def put(self, queued: _Queued) -> None:
        self.unsent += 1
        group = queued[1]
        waiting = self.queues.get(group)
        if waiting is not None:
            waiting.append(queued)  # its group's sender takes it after the ones before
            return
        self.queues[group] = collections.deque([queued])
        task = asyncio.get_running_loop().create_task(self._send(group))
        _pending_sends.add(task)
        task.add_done_callback(_pending_sends.discard)

    async def _send(self, group: str) -> None:
        waiting = self.queues[group]
        try:
            while waiting:
                batch = _leading_batch(waiting)
                try:
                    await send_or_keep(batch[0][0], group, *(queued[2] for queued in batch))
                finally:
                    for _, _, _, done in batch:
                        waiting.popleft()
                        self.unsent -= 1
                        if done is not None and not done.done():
                            done.set_result(None)
        finally:
            for *_, done in waiting:  # cancelled with the loop: nobody may wait forever
                if done is not None and not done.done():
                    done.set_result(None)
            self.unsent -= len(waiting)
            del self.queues[group]


#: The most messages of one group sent in one go (their values are at most
#: ``KANBAN_PUSH_VALUE_BYTES`` each: a few MB to Redis at the most).
MAX_BATCH: Final = 64


def _leading_batch(waiting: collections.deque[_Queued]) -> list[_Queued]:
    """The first messages waiting, up to ``MAX_BATCH``, as long as they go to one layer."""
    layer = waiting[0][0]
    return list(itertools.takewhile(lambda q: q[0] is layer, itertools.islice(waiting, MAX_BATCH)))


#: Messages a loop may hold unsent before the threads publishing changes wait for their own,
#: as every other message's sender does: when Redis falls behind for long, the writers slow
#: to its pace instead of the worker's memory growing with the queue. A busy board's
#: backlog drains at ``MAX_BATCH`` a send, so a healthy layer never holds this many.
MAX_UNSENT: Final = 1024

_outboxes: PerLoop[_Outbox] = PerLoop(_Outbox)


def _outbox_put(
    layer: Any,
    group: str,
    message: dict[str, Any],
    done: concurrent.futures.Future[None] | None,
) -> None:
    """On the worker's loop: queue the message behind its group's."""
    _outboxes.get().put((layer, group, message, done))


def publish_changes(project_id: UUID, changes: Sequence[Change]) -> None:
    """One layer message per committed write batch of one project: each change as a list
    (``Change``'s fields), filtered per subscription by the rule of its kind."""
    group = project_group(project_id)
    at = time.time()  # wall clock (the workers are on one network): write -> delivered
    message = {
        "type": CHANGED,
        "project": str(project_id),
        "changes": [list(c) for c in changes],
        "at": at,
        # Numbered per group, so a hub hears a message the layer dropped (``overflow``).
        **overflow.stamp(group, at),
    }
    _group_send(group, message)


def publish_plugin_changed(project_id: UUID, version: str) -> None:
    _group_send(
        board_group(project_id),
        {"type": "plugin.changed", "project": str(project_id), "version": version},
    )


def publish_inbox_changed(users: Iterable[int]) -> None:
    """One message per person: their pages count again, if their session still holds."""
    for user_id in users:
        _group_send(inbox_group(user_id), {"type": "inbox.changed"})


def publish_access_changed(projects: Iterable[UUID], users: Iterable[int]) -> None:
    _group_send(
        ACCESS_GROUP,
        {
            "type": "access.changed",
            "projects": [str(p) for p in projects],
            "users": list(users),
        },
    )
