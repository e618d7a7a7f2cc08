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
import time
from collections.abc import Iterable, Sequence
from typing import Any
from uuid import UUID

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from kanban.bridge import overflow
from kanban.bridge.frames import Change
from kanban.bridge.overflow import send_or_keep
from kanban.data.change_groups import CHANGED, project_group

ACCESS_GROUP = "kanban.access"


def board_group(project_id: UUID) -> str:
    """A board's open iframes, told to reload when its plugin is imported again."""
    return f"kanban.board.{project_id}"


def inbox_group(user_id: int) -> str:
    """A person's open pages (``kanban.bridge.inbox``), told when their inbox changed."""
    return f"kanban.inbox.{user_id}"


_pending_sends: set[asyncio.Task[None]] = set()


def _group_send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is None:
        async_to_sync(send_or_keep)(layer, group, message)
    else:
        # Called from a thread that runs an event loop (sync code inside async code):
        # async_to_sync cannot run here, so hand the send to that loop.
        task = loop.create_task(send_or_keep(layer, group, message))
        _pending_sends.add(task)
        task.add_done_callback(_pending_sends.discard)


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
