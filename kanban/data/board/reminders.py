"""Due-date reminders: each assignee of a card due tomorrow is told so the day before, and
once more when it is overdue, as a notification (their inbox, and mail as each chose:
immediately, in the daily digest, or not at all). ``manage.py due_reminders`` runs it once a
day, beside ``email_digests``; a second run the same day sends nothing new.

A card that is archived, in the board's last column (where the Board puts finished work:
Done), or assigned to nobody who is still a member, reminds nobody. What was sent is the
inbox itself: a reminder of the same kind, card, person and due date means it went already,
so a due date moved makes the card remind again (until the inbox is pruned after
KANBAN_NOTIFICATION_DAYS)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any, Final

from django.utils import timezone

from kanban.access.memberships import members_of
from kanban.data.board import layout
from kanban.data.notifications import notifications_deliver
from kanban.models import Notification, Project, ProjectType
from kanban.projects.package_changes import package_name
from storage import kv
from storage.limits import MAX_BATCH_KEYS

DUE_SOON: Final = "due-soon"
OVERDUE: Final = "overdue"


def due_reminders_send(*, today: date | None = None) -> int:
    """Reminds every assignee whose card is due tomorrow or overdue and has not been told;
    answers how many notifications it made."""
    today = today or timezone.localdate()
    made = 0
    for board in _boards():
        usernames = {member.username: member.user_id for member in members_of(project=board)}
        columns = layout.normalize_columns(_value(board, layout.COLUMNS_KEY))
        columns = columns or layout.normalize_columns(layout.DEFAULT_COLUMNS)
        last_column = columns[-1]["id"] if len(columns) > 1 else None
        wanted = [
            (card, kind, user_id)
            for card in _cards(board)
            if not card["archived"] and card["due"] and card["column"] != last_column
            for kind in [_kind(date.fromisoformat(card["due"]), today)]
            if kind is not None
            for user_id in {usernames[name] for name in card["assignees"] if name in usernames}
        ]
        made += len(_remind(board, wanted))
    return made


def _kind(due: date, today: date) -> str | None:
    if due == today + timedelta(days=1):
        return DUE_SOON
    return OVERDUE if due < today else None


def _boards() -> Iterator[Project]:
    for board in Project.objects.filter(archived_at=None, type=ProjectType.KANBAN).order_by("id"):
        if package_name(board.package_json) == layout.BOARD_PACKAGE:
            yield board


def _value(board: Project, key: str) -> Any:
    entry = kv.kv_get(dataset=kv.Dataset(board.id), key=key)
    return None if entry is None else entry.value


def _cards(board: Project) -> Iterator[dict[str, Any]]:
    ids = layout.normalize_index(_value(board, layout.INDEX_KEY))
    for start in range(0, len(ids), MAX_BATCH_KEYS):
        batch = ids[start : start + MAX_BATCH_KEYS]
        keys = [layout.card_key(card_id) for card_id in batch]
        entries = kv.kv_get_many(dataset=kv.Dataset(board.id), keys=keys)
        for card_id, entry in zip(batch, entries, strict=True):
            card = layout.normalize_card(card_id, None if entry is None else entry.value)
            if card is not None:
                yield card


def _remind(board: Project, wanted: list[tuple[dict[str, Any], str, int]]) -> list[Notification]:
    if not wanted:
        return []
    sent = {
        (card, via, user_id, text.split(":", 1)[0])
        for card, via, user_id, text in Notification.objects.filter(
            project=board, via__in=(DUE_SOON, OVERDUE), card__in={c["id"] for c, _, _ in wanted}
        ).values_list("card", "via", "user_id", "text")
    }
    fresh = [
        Notification(
            user_id=user_id, project=board, text=_text(card, kind), card=card["id"], via=kind
        )
        for card, kind, user_id in wanted
        if (card["id"], kind, user_id, _when(card, kind)) not in sent
    ]
    return notifications_deliver(notifications=fresh) if fresh else []


def _when(card: dict[str, Any], kind: str) -> str:
    """The reminder's text up to its colon: its kind and the due date it was about, so a
    title edited since still counts as sent, and a due date moved reminds again."""
    due = date.fromisoformat(card["due"])
    day = f"{due:%b} {due.day}, {due.year}"  # the Board's own date format (board-dates.js)
    return f"Due tomorrow ({day})" if kind == DUE_SOON else f"Overdue since {day}"


def _text(card: dict[str, Any], kind: str) -> str:
    return f"{_when(card, kind)}: {card['title'][:400]}"
