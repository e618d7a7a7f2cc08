"""Notifications by email, per person: each one as it comes (``immediately``, the default), a
daily digest, or ``off``; only to a person with an email address.

The mails are queued by ``kanban.data.notifications.notification_send`` in the transaction
that makes the notifications (Django's email framework; ``EMAIL_BACKEND`` queues and the
worker sends, kanban/jobs/email.py), so a notification that rolls back mails nobody. Every
mail carries a signed one-click unsubscribe link that works without signing in (and the
``List-Unsubscribe`` headers mail programs offer as a button)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Final

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.mail import EmailMultiAlternatives
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from kanban.access.memberships import display_name
from kanban.models import EmailNotifications, Notification, Preference
from storage.errors import invalid_argument

#: Signs unsubscribe links; a link signed for another purpose never passes.
UNSUBSCRIBE_SALT: Final = "kanban.email.unsubscribe"
#: A digest lists at most this many notifications (the newest), then says how many more.
DIGEST_MAX: Final = 50


def email_notifications_of(*, user: Any) -> str:
    found = Preference.objects.filter(user=user).values_list("email_notifications", flat=True)
    return found.first() or EmailNotifications.IMMEDIATELY.value


def email_settings_set(*, user: Any, email: object, choice: object) -> None:
    """The person's email address (empty: none, so no mail) and how they hear by email."""
    if not isinstance(choice, str) or choice not in EmailNotifications.values:
        names = ", ".join(EmailNotifications.values)
        raise invalid_argument(f"choose one of {names}", field="email_notifications")
    if not isinstance(email, str):
        raise invalid_argument("an email address is text", field="email")
    address = email.strip()
    if address:
        try:
            validate_email(address)
        except Exception:
            raise invalid_argument(f"{address!r} is not an email address", field="email") from None
    with transaction.atomic():
        get_user_model().objects.filter(pk=user.pk).update(email=address)
        _choose(user_id=user.pk, choice=choice)
    user.email = address


def _choose(*, user_id: int, choice: str) -> None:
    preference, _ = Preference.objects.get_or_create(user_id=user_id)
    if choice == EmailNotifications.DIGEST and preference.email_notifications != choice:
        preference.digest_through = timezone.now()  # the first digest starts from now
    preference.email_notifications = choice
    preference.save()


def unsubscribe_url(*, user_id: int) -> str:
    token = signing.dumps({"u": user_id}, salt=UNSUBSCRIBE_SALT, compress=True)
    return f"{settings.KANBAN_SITE_URL}/email/unsubscribe/{token}"


def unsubscribe_check(*, token: object) -> Any:
    """The person a link was signed for, or ``invalid_argument``. Links do not expire: an
    old mail's link must still stop the mail."""
    try:
        user_id = signing.loads(str(token), salt=UNSUBSCRIBE_SALT)["u"]
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise invalid_argument("This unsubscribe link is not one this server made.") from None
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        raise invalid_argument("This unsubscribe link's account no longer exists.")
    return user


def unsubscribe(*, token: object) -> Any:
    """Turns notification emails off for the person the link was signed for."""
    user = unsubscribe_check(token=token)
    _choose(user_id=user.pk, choice=EmailNotifications.OFF)
    return user


def _link(item: Notification) -> str:
    board = f"{settings.KANBAN_SITE_URL}/boards/{item.project_id}/"
    return f"{board}#card={item.card}" if item.card else board


def _mail(user: Any, subject: str, lines: Sequence[str], html: str) -> EmailMultiAlternatives:
    unsubscribe_link = unsubscribe_url(user_id=user.pk)
    account = f"{settings.KANBAN_SITE_URL}/account/email"
    footer = (
        f"\n--\nYou get this because notification emails are on for @{user.get_username()}."
        f"\nChange how: {account}\nUnsubscribe in one click: {unsubscribe_link}\n"
    )
    message = EmailMultiAlternatives(
        subject=subject,
        body="\n".join(lines) + "\n" + footer,
        to=[user.email],
        headers={
            "List-Unsubscribe": f"<{unsubscribe_link}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        },
    )
    message.attach_alternative(
        format_html(
            '<!doctype html><html lang="en"><body style="font:15px/1.5 system-ui,sans-serif;'
            'color:#1d2330">{}<p style="color:#667085;font-size:13px">You get this because '
            'notification emails are on for @{}. <a href="{}">Change how</a> · '
            '<a href="{}">Unsubscribe</a></p></body></html>',
            html,
            user.get_username(),
            account,
            unsubscribe_link,
        ),
        "text/html",
    )
    return message


def _who(item: Notification) -> str:
    # Nobody sent a reminder or a notice of the server's own: it comes from the product.
    return display_name(item.actor) if item.actor is not None else "Kanban"


def notifications_email(*, notifications: Iterable[Notification]) -> int:
    """Queues one mail for each new notification whose person wants them immediately and has
    an address; answers how many. Runs in the caller's transaction."""
    items = list(notifications)
    people = {item.user_id for item in items}
    choices = dict(
        Preference.objects.filter(user_id__in=people).values_list("user_id", "email_notifications")
    )
    users = {
        user.pk: user
        for user in get_user_model().objects.filter(pk__in=people).exclude(email="")
        if choices.get(user.pk, EmailNotifications.IMMEDIATELY) == EmailNotifications.IMMEDIATELY
    }
    messages = []
    for item in items:
        user = users.get(item.user_id)
        if user is None:
            continue
        project, who = item.project, _who(item)
        subject = f"{who} on {project.name}: {_first_line(item.text)}"
        lines = [f"{who} on {project.name}:", "", item.text, "", f"Open it: {_link(item)}"]
        html = format_html(
            '<p><strong>{}</strong> on {}:</p><blockquote style="margin:0 0 1em;'
            'padding-left:.8em;border-left:3px solid #e4e7ec">{}</blockquote>'
            '<p><a href="{}">Open {}</a></p>',
            who,
            project.name,
            item.text,
            _link(item),
            "the card" if item.card else "the board",
        )
        messages.append(_mail(user, subject, lines, html))
    for message in messages:
        message.send()
    return len(messages)


def _first_line(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def digests_send(*, now: datetime | None = None) -> int:
    """One mail to each person on the daily digest with notifications since their last one
    (of boards they still belong to); answers how many mails. Run daily (``manage.py
    email_digests``, beside ``prune``); running it twice sends nothing new."""
    now = now or timezone.now()
    sent = 0
    for preference in Preference.objects.filter(
        email_notifications=EmailNotifications.DIGEST
    ).select_related("user"):
        user = preference.user
        since = preference.digest_through or preference.updated_at
        with transaction.atomic():
            items = list(
                Notification.objects.filter(
                    user=user,
                    project__memberships__user=user,
                    created_at__gt=since,
                    created_at__lte=now,
                )
                .select_related("project", "actor")
                .order_by("-created_at", "-id")[: DIGEST_MAX + 1]
            )
            Preference.objects.filter(pk=preference.pk).update(digest_through=now)
            if not items or not user.email:
                continue
            _mail(user, *_digest(items)).send()
            sent += 1
    return sent


def _digest(items: list[Notification]) -> tuple[str, list[str], str]:
    shown = items[:DIGEST_MAX]
    more = len(items) - len(shown)
    subject = f"Your day on Kanban: {len(shown)}{'+' if more else ''} notifications"
    lines = ["What happened for you since the last digest:", ""]
    for item in shown:
        lines += [f"- {_who(item)} on {item.project.name}: {item.text}", f"  {_link(item)}"]
    if more:
        lines.append("...and more in your inbox.")
    html = format_html(
        "<p>What happened for you since the last digest:</p><ul>{}</ul>{}",
        format_html_join(
            "",
            '<li><strong>{}</strong> on {}: {} <a href="{}">Open</a></li>',
            ((_who(item), item.project.name, item.text, _link(item)) for item in shown),
        ),
        format_html("<p>{}</p>", "…and more in your inbox.") if more else "",
    )
    return subject, lines, html
