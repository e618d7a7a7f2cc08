"""The host pages' one date format, and their avatars.

``{{ value|when }}``: a ``<time>`` saying when, relative where that reads better ("just
now", "12 minutes ago", "yesterday at 15:16", "in 2 days") and the locale's date and time
otherwise ("Dec. 4, 2026, 15:16"), in the current time zone; its title is the full date and
time with the zone, its ``datetime`` the ISO instant.
"""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils import formats, timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from kanban.web.avatars import avatar_hue, avatar_initials

register = template.Library()

#: Within this many days, a date is said as "in N days" / "N days ago".
RELATIVE_DAYS = 6


def when_text(moment: datetime, *, now: datetime | None = None) -> str:
    local, today = timezone.localtime(moment), timezone.localtime(now or timezone.now())
    clock = local.strftime("%H:%M")
    seconds = (today - local).total_seconds()
    if 0 <= seconds < 60:
        return "just now"
    if 60 <= seconds < 3600:
        minutes = int(seconds // 60)
        return f"{minutes} minute{'s' if minutes != 1 else ''} ago"
    days = (local.date() - today.date()).days
    if days == 0:
        return f"today at {clock}"
    if days == -1:
        return f"yesterday at {clock}"
    if days == 1:
        return f"tomorrow at {clock}"
    if 1 < days <= RELATIVE_DAYS:
        return f"in {days} days"
    if -RELATIVE_DAYS <= days < -1:
        return f"{-days} days ago"
    return f"{formats.date_format(local, 'DATE_FORMAT')}, {clock}"


@register.filter
def when(value: datetime | str | None) -> SafeString | str:
    if not value:
        return ""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    local = timezone.localtime(moment)
    full = f"{formats.date_format(local, 'DATE_FORMAT')}, {local:%H:%M} {local.tzname()}"
    return format_html(
        '<time datetime="{}" title="{}">{}</time>', moment.isoformat(), full, when_text(moment)
    )


@register.filter
def hue(username: str) -> int:
    """The person's avatar hue (kanban.web.avatars), for a face drawn in a template."""
    return avatar_hue(username)


@register.filter
def initials(display_name: str) -> str:
    return avatar_initials(display_name)
