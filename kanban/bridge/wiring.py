"""Connects committed data and access changes to the bridge's fan-out. Called once from
``KanbanConfig.ready``; the handlers only translate and forward."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Final
from uuid import UUID

from django.conf import settings
from django.contrib.auth import user_logged_out

from kanban.access import events as access_events
from kanban.bridge import publish
from kanban.bridge.frames import Change
from kanban.bridge.subscription import ChangeKind
from kanban.data import notifications
from kanban.projects import plugin_events
from storage.knowledge_format import is_document_key
from storage.kv import KvChange, add_kv_listener


def _kind(change: KvChange) -> ChangeKind | None:
    """Which subscriptions may hear of a change: project-scope KV by the KV read rule; a
    Knowledge document by the knowledge read rule, once per write through its body key (the
    index records every write also touches are not documents). Nothing else is forwarded."""
    dataset = change.dataset
    if dataset.conversation_id is not None:
        return None
    if dataset.domain == "kv":
        return "kv"
    if is_document_key(change.key):
        return "knowledge"
    return None


def _forward_kv(changes: Sequence[KvChange]) -> None:
    """Each KV change carries its value when it is at most ``KANBAN_PUSH_VALUE_BYTES`` of
    JSON, and while the batch's pushed values stay within ``MAX_PUSHED_PER_EVENT`` of
    them: a viewer then applies it without reading. Larger ones are only named."""
    by_project: dict[UUID, list[Change]] = defaultdict(list)
    limit = settings.KANBAN_PUSH_VALUE_BYTES
    budget = MAX_PUSHED_PER_EVENT * limit
    for change in changes:
        kind = _kind(change)
        if kind is None:
            continue
        text = change.text if kind == "kv" else None
        size = 0 if text is None else _utf8_size(text, limit)
        if size > min(limit, budget):
            text = None
        budget -= size if text is not None else 0
        by_project[change.dataset.project_id].append(
            Change(kind, change.key, change.revision, text, change.deleted, change.source)
        )
    for project_id, project_changes in by_project.items():
        publish.publish_changes(project_id, project_changes)


#: One event pushes at most this many values at the push limit (a batch that writes many
#: large values names the rest).
MAX_PUSHED_PER_EVENT: Final = 16


def _utf8_size(text: str, limit: int) -> int:
    """The text's UTF-8 size; cheap for the common case, a text well under the limit (a
    character is at most 4 bytes)."""
    if 4 * len(text) <= limit:
        return len(text)  # a lower bound, and within the limit either way
    return len(text.encode("utf-8"))


def _forward_access(event: access_events.AccessChanged) -> None:
    publish.publish_access_changed(event.project_ids, event.user_ids)
    # A membership gone hides that board's notifications; a sign-out ends the inbox socket.
    publish.publish_inbox_changed(event.user_ids)


def _forward_notified(event: notifications.Notified) -> None:
    publish.publish_inbox_changed(event.user_ids)


def _forward_plugin(event: plugin_events.PluginChanged) -> None:
    publish.publish_plugin_changed(event.project_id, event.version)


def _user_logged_out(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    if user is None:
        return
    session = getattr(request, "session", None)
    if session is not None:
        # Django flushes the session only after sending this signal; a socket re-checked
        # in between would still find it alive, so end it before anyone is told.
        session.flush()
    access_events.publish_access_changed(user_ids=[user.pk])


def connect() -> None:
    add_kv_listener(_forward_kv)
    access_events.ACCESS_CHANGED.listen(_forward_access)
    plugin_events.PLUGIN_CHANGED.listen(_forward_plugin)
    notifications.NOTIFIED.listen(_forward_notified)
    user_logged_out.connect(_user_logged_out, dispatch_uid="kanban.bridge.logout")
