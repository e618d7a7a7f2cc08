"""The one place webhook events come from: committed changes, heard after commit.

Cards and comments are the Board's KV values (``kanban.data.board.layout``), written by the
page over the bridge, by REST, by MCP and by imports alike; so the events are derived from
storage's committed writes (``add_kv_listener``), comparing each value with the version it
replaced (kept history), not from any one write path. Members joining and leaving come from
the membership rows, sent on commit as well. A board without a webhook that is on costs no
query (``hooked``: each process keeps a list of the boards that have one)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, Final

from django.db import transaction
from django.db.models.signals import post_delete, post_save

from kanban.data.board.comments import COMMENTS_PREFIX, normalize_comments
from kanban.data.board.layout import CARD_PREFIX, INDEX_KEY, normalize_card, normalize_index
from kanban.models import Membership, WebhookEvent
from kanban.webhooks.hooked import hooked_projects
from kanban.webhooks.service import webhook_event_send
from storage.kv import Dataset, KvChange, add_kv_listener, kv_get, kv_history

#: What a ``card.changed`` names when it differs (a comment count is ``card.commented``'s).
CHANGED_FIELDS: Final = ("title", "description", "assignees", "labels", "due", "checklist")

Derived = tuple[WebhookEvent, dict[str, Any]]
#: The value a write replaced, when no version of it is kept any more.
UNKNOWN: Final = object()


def _board_change(change: KvChange) -> bool:
    dataset = change.dataset
    return (
        dataset.domain == "kv"
        and dataset.conversation_id is None
        and change.key.startswith((CARD_PREFIX, COMMENTS_PREFIX))
    )


def _from_kv(changes: Sequence[KvChange]) -> None:
    relevant = [change for change in changes if _board_change(change)]
    if not relevant:
        return
    hooked = hooked_projects()
    # The changes of one commit: an index written in it is no evidence of the card before.
    batch_start = min(int(change.revision) for change in changes)
    for change in relevant:
        if change.dataset.project_id not in hooked:
            continue
        actor, before, after = _versions(change, batch_start)
        for event, data in _derive(change, before, after):
            webhook_event_send(
                project_id=change.dataset.project_id, event=event, data=data, actor=actor
            )


def _versions(change: KvChange, batch_start: int) -> tuple[str | None, Any, Any]:
    """Who wrote the change, the value it replaced and the value it wrote."""
    seq = int(change.revision)
    versions = kv_history(dataset=change.dataset, key=change.key, before=str(seq + 1), limit=2)
    written = next((v for v in versions if v.seq == seq), None)
    replaced = next((v for v in versions if v.seq < seq), None)
    actor = (written.source or {}).get("user") if written is not None else None
    if replaced is None:
        # No earlier version kept: a new card (or its first comment), or one untouched for
        # longer than its history is kept (KANBAN_HISTORY_DAYS, then pruned). The board's
        # index tells them apart.
        before = UNKNOWN if _indexed_before(change, batch_start) else None
    else:
        before = None if replaced.deleted else replaced.value
    if change.deleted:
        after = None
    elif change.text is not None:
        after = json.loads(change.text)
    else:
        after = None if written is None else written.value
    return actor if isinstance(actor, str) else None, before, after


def _indexed_before(change: KvChange, seq: int) -> bool:
    """Whether the board's card index listed this card before the commit whose first write
    is ``seq``. Every writer adds a card before indexing it (the layout's rule: no id
    without its card), so a new card is never in an earlier index."""
    card_id = change.key.removeprefix(CARD_PREFIX).removeprefix(COMMENTS_PREFIX)
    index = kv_get(dataset=change.dataset, key=INDEX_KEY)
    if index is not None and int(index.revision) < seq:
        return card_id in normalize_index(index.value)
    earlier = kv_history(dataset=change.dataset, key=INDEX_KEY, before=str(seq), limit=1)
    return bool(earlier) and card_id in normalize_index(earlier[0].value)


def _derive(change: KvChange, before: Any, after: Any) -> Iterator[Derived]:
    if change.key.startswith(CARD_PREFIX):
        yield from card_events(change.key[len(CARD_PREFIX) :], before, after)
    else:
        card_id = change.key[len(COMMENTS_PREFIX) :]
        yield from comment_events(_card_of(change.dataset, card_id), before, after)


def card_events(card_id: str, before: Any, after: Any) -> Iterator[Derived]:
    """A card's events between two stored values: added, moved (its column or its place in
    it), archived, changed (naming the fields; None when the value it replaced is no longer
    kept, ``UNKNOWN``). A card deleted for good sends none."""
    new = normalize_card(card_id, after)
    if new is None:
        return
    if before is UNKNOWN:
        yield WebhookEvent.CARD_CHANGED, {"card": new, "changed": None}
        return
    old = normalize_card(card_id, before)
    if old is None:
        yield WebhookEvent.CARD_ADDED, {"card": new}
        return
    if (old["column"], old["rank"]) != (new["column"], new["rank"]):
        yield (
            WebhookEvent.CARD_MOVED,
            {"card": new, "from": {"column": old["column"]}, "to": {"column": new["column"]}},
        )
    if new["archived"] and not old["archived"]:
        yield WebhookEvent.CARD_ARCHIVED, {"card": new}
    changed = [name for name in CHANGED_FIELDS if old[name] != new[name]]
    if old["archived"] and not new["archived"]:
        changed.append("archived")  # restored
    if changed:
        yield WebhookEvent.CARD_CHANGED, {"card": new, "changed": changed}


def comment_events(card: dict[str, Any], before: Any, after: Any) -> Iterator[Derived]:
    """One ``card.commented`` per comment that was not there before (edits send none).
    When the list it replaced is no longer kept (``UNKNOWN``), the last comment only: a
    comment is added at the end, one at a time."""
    comments = normalize_comments(after)
    if before is UNKNOWN:
        comments = comments[-1:]
    seen = set() if before is UNKNOWN else {c["id"] for c in normalize_comments(before)}
    for comment in comments:
        if comment["id"] not in seen:
            yield WebhookEvent.CARD_COMMENTED, {"card": card, "comment": comment}


def _card_of(dataset: Dataset, card_id: str) -> dict[str, Any]:
    entry = kv_get(dataset=dataset, key=CARD_PREFIX + card_id)
    card = normalize_card(card_id, None if entry is None else entry.value)
    return {"id": card_id, "title": card["title"]} if card else {"id": card_id}


def _member(membership: Membership) -> dict[str, Any]:
    user = membership.user
    return {
        "member": {
            "username": user.get_username(),
            "name": user.get_full_name() or user.get_username(),
            "role": membership.role,
        }
    }


def _member_saved(sender: Any, instance: Membership, created: bool, **kwargs: Any) -> None:
    if created and instance.project_id in hooked_projects():
        data, project_id = _member(instance), instance.project_id
        transaction.on_commit(
            lambda: webhook_event_send(
                project_id=project_id, event=WebhookEvent.MEMBER_JOINED, data=data
            )
        )


def _member_deleted(sender: Any, instance: Membership, **kwargs: Any) -> None:
    if instance.project_id not in hooked_projects():
        return
    data, project_id = _member(instance), instance.project_id
    transaction.on_commit(
        lambda: webhook_event_send(project_id=project_id, event=WebhookEvent.MEMBER_LEFT, data=data)
    )


def connect() -> None:
    """Called once, from ``KanbanConfig.ready``."""
    add_kv_listener(_from_kv)
    post_save.connect(_member_saved, sender=Membership, dispatch_uid="kanban.webhooks.joined")
    post_delete.connect(_member_deleted, sender=Membership, dispatch_uid="kanban.webhooks.left")
