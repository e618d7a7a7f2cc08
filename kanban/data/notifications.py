"""Notifications: what someone on a board asks members of it to see, in each person's inbox.

A plugin sends them (SDK ``kanban.notify``: the Board does for a mention and a new
assignment), as does ``board_cards`` for an agent's assignment. Only a person who may write
to the board may notify, only its members, at most ``KANBAN_NOTIFY_PER_MINUTE`` recipients a
minute (counted in the database, so exact across workers), nobody receives more than
``KANBAN_NOTIFY_PER_RECIPIENT_HOUR`` an hour from all senders together, and nobody notifies
themselves.
A person reads only their own, of boards they still belong to. Each change of someone's
inbox is announced once it commits (``NOTIFIED``), so their open pages update the count.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final
from uuid import UUID

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from kanban.access.memberships import Member, access_project_role, display_name, members_of
from kanban.accounts.email_notifications import notifications_email
from kanban.models import MembershipOffer, Notification, Role
from storage.errors import ErrorCode, KanbanError, invalid_argument
from storage.events import Topic

MAX_TEXT: Final = 500
MAX_RECIPIENTS: Final = 20
DEFAULT_LIST: Final = 50
MAX_LIST: Final = 100
#: Row ids are 64-bit: a larger number names none (and a database would refuse it).
MAX_ID: Final = 2**63 - 1
#: The most notifications one request marks read by id.
MAX_READ: Final = 1000
_CARD_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


@dataclass(frozen=True, slots=True)
class Notified:
    """These people's inboxes changed (a notification came, or they read some)."""

    user_ids: frozenset[int]


NOTIFIED: Topic[Notified] = Topic("notifications")


def check_text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise invalid_argument("a notification needs text", field="text")
    text = value.strip()
    if len(text) > MAX_TEXT:
        raise invalid_argument(f"a notification is at most {MAX_TEXT} characters", field="text")
    if any(not (ch.isprintable() or ch == "\n") for ch in text):
        raise invalid_argument("a notification has no control characters", field="text")
    return text


def check_card(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or not 1 <= len(value) <= 64 or set(value) - _CARD_CHARS:
        raise invalid_argument("card is an id of 1 to 64 letters, digits, _ and -", field="card")
    return value


def notification_send(
    *,
    actor: Any,
    project_id: UUID,
    users: object,
    text: object,
    card: object = None,
    via: str,
    alias: str | None = None,
) -> dict[str, Any]:
    """Notify ``users`` (usernames, members of the board) from ``actor``; answers
    ``{"sent": [usernames]}`` (the actor is never among them). Never through a related
    board (``alias``): a grant opens a board's data, not its people's inboxes."""
    if alias is not None:
        raise invalid_argument("a plugin notifies members of its own board", field="alias")
    project = access_project_role(
        user=actor, project_id=project_id, needed=Role.DEVELOPER, doing="notifying people"
    )
    if not isinstance(users, list) or not all(isinstance(name, str) for name in users):
        raise invalid_argument("users is a list of usernames", field="users")
    if not 1 <= len(users) <= MAX_RECIPIENTS:
        raise invalid_argument(f"notify 1 to {MAX_RECIPIENTS} people at once", field="users")
    checked_text, checked_card = check_text(text), check_card(card)
    members = {member.username: member for member in members_of(project=project)}
    strangers = [name for name in users if name not in members]
    if strangers:
        raise invalid_argument(f"{strangers[0]!r} is not a member of this board", field="users")
    recipients = [
        members[name] for name in dict.fromkeys(users) if members[name].user_id != actor.pk
    ]
    if not recipients:
        return {"sent": []}
    with transaction.atomic():
        # One count at a time per sender and per recipient: two workers counting at once
        # could both pass a limit. Locked in one order, so two senders never wait on each
        # other in a circle.
        people = {actor.pk, *(member.user_id for member in recipients)}
        list(get_user_model().objects.select_for_update().filter(pk__in=people).order_by("pk"))
        now = timezone.now()
        sent = Notification.objects.filter(
            actor=actor, created_at__gte=now - timedelta(minutes=1)
        ).count()
        if sent + len(recipients) > settings.KANBAN_NOTIFY_PER_MINUTE:
            raise KanbanError(
                ErrorCode.RATE_LIMITED,
                f"at most {settings.KANBAN_NOTIFY_PER_MINUTE} notifications a minute; "
                "try again in a minute",
            )
        _check_room(recipients, since=now - timedelta(hours=1))
        notifications_deliver(
            notifications=[
                Notification(
                    user_id=member.user_id,
                    project=project,
                    actor=actor,
                    text=checked_text,
                    card=checked_card,
                    via=via,
                )
                for member in recipients
            ]
        )
    return {"sent": [member.username for member in recipients]}


def notifications_deliver(*, notifications: list[Notification]) -> list[Notification]:
    """Puts each in its person's inbox, queues the mail of those who want it at once, and
    announces the inboxes that changed once it all commits: the one way a notification is
    made, whoever (or whatever: a reminder, a webhook turned off) sends it."""
    with transaction.atomic():
        created = Notification.objects.bulk_create(notifications)
        # Mail goes in this transaction: if and when the notifications do
        # (kanban/accounts/email_notifications.py).
        notifications_email(notifications=created)
        NOTIFIED.send_on_commit(Notified(frozenset(item.user_id for item in created)))
    return created


def _check_room(recipients: list[Member], *, since: datetime) -> None:
    """Every recipient's inbox has room this hour, whoever sent what fills it: however many
    boards and senders reach a person, at most ``KANBAN_NOTIFY_PER_RECIPIENT_HOUR``."""
    limit = settings.KANBAN_NOTIFY_PER_RECIPIENT_HOUR
    received = dict(
        Notification.objects.filter(
            user_id__in=[member.user_id for member in recipients], created_at__gte=since
        )
        .values("user_id")
        .annotate(count=Count("id"))
        .values_list("user_id", "count")
    )
    full = [member for member in recipients if received.get(member.user_id, 0) >= limit]
    if full:
        raise KanbanError(
            ErrorCode.RATE_LIMITED,
            f"{full[0].username} has had {limit} notifications this hour; try again later",
        )


def _visible(user: Any) -> Any:
    """Their own, of boards they still belong to."""
    return Notification.objects.filter(user=user, project__memberships__user=user)


def notifications_unread(*, user: Any) -> int:
    return int(_visible(user).filter(read_at=None).count())


def inbox_unread(*, user: Any) -> int:
    """The top bar's count: unread notifications and the boards offered, still unanswered."""
    offers = MembershipOffer.objects.filter(user=user, declined_at=None)
    return notifications_unread(user=user) + offers.count()


def notifications_list(
    *, user: Any, limit: object = DEFAULT_LIST, before: object = None
) -> dict[str, Any]:
    """Newest first: ``{notifications, unread, cursor}`` (``cursor`` for the next page as
    ``before``, null at the end)."""
    if type(limit) is not int or not 1 <= limit <= MAX_LIST:
        raise invalid_argument(f"limit is a whole number from 1 to {MAX_LIST}", field="limit")
    found = _visible(user).select_related("project", "actor")
    if before is not None:
        if not _is_id(before):
            raise invalid_argument("before is the cursor a page answered", field="before")
        found = found.filter(pk__lt=before)
    page = list(found.order_by("-id")[: limit + 1])
    more = len(page) > limit
    return {
        "notifications": [render_notification(item) for item in page[:limit]],
        "unread": notifications_unread(user=user),
        "cursor": page[limit - 1].pk if more else None,
    }


def notifications_read(*, user: Any, ids: object = None) -> int:
    """Mark these (or, for None, all) of the user's notifications read; how many were."""
    unread = _visible(user).filter(read_at=None)
    if ids is not None:
        if not isinstance(ids, list) or not all(_is_id(i) for i in ids) or len(ids) > MAX_READ:
            raise invalid_argument("ids is a list of notification ids", field="ids")
        unread = unread.filter(pk__in=ids)
    with transaction.atomic():
        count = Notification.objects.filter(pk__in=list(unread.values_list("pk", flat=True)))
        changed = int(count.update(read_at=timezone.now()))
        if changed:
            NOTIFIED.send_on_commit(Notified(frozenset({user.pk})))
    return changed


def notifications_prune(*, now: datetime | None = None) -> int:
    """Delete every notification older than ``KANBAN_NOTIFICATION_DAYS`` (as of ``now``), read
    or not; the people who had an unread one among them see their count change. How many
    went."""
    before = (now or timezone.now()) - timedelta(days=settings.KANBAN_NOTIFICATION_DAYS)
    with transaction.atomic():
        old = Notification.objects.filter(created_at__lt=before)
        unread_of = frozenset(old.filter(read_at=None).values_list("user_id", flat=True))
        deleted, _ = old.delete()
        if unread_of:
            NOTIFIED.send_on_commit(Notified(unread_of))
    return int(deleted)


def _is_id(value: object) -> bool:
    return type(value) is int and 0 < value <= MAX_ID


def notification_open(*, user: Any, notification_id: int) -> str | None:
    """Marks one of the user's notifications read; the address of what it is about (None
    when it is not theirs, or its board no longer is)."""
    if not _is_id(notification_id):
        return None
    item = _visible(user).select_related("project").filter(pk=notification_id).first()
    if item is None:
        return None
    notifications_read(user=user, ids=[item.pk])
    return str(render_notification(item)["url"])


def render_notification(item: Notification) -> dict[str, Any]:
    board = f"/boards/{item.project_id}/"
    return {
        "id": item.pk,
        "text": item.text,
        "board": {"id": str(item.project_id), "name": item.project.name},
        "card": item.card or None,
        "url": board + (f"#card={item.card}" if item.card else ""),
        "sender": None
        if item.actor is None
        else {"username": item.actor.get_username(), "displayName": display_name(item.actor)},
        "via": item.via,
        "createdAt": item.created_at.isoformat(),
        "read": item.read_at is not None,
    }
