"""A person's own settings for the host pages (kanban.models.Preference)."""

from __future__ import annotations

from typing import Any

from kanban.models import ColorScheme, Preference
from storage.errors import invalid_argument


def color_scheme_of(*, user: Any) -> str:
    """``system`` (follow the device), ``light`` or ``dark``; ``system`` for anyone signed
    out or who never chose."""
    if not getattr(user, "is_authenticated", False):
        return ColorScheme.SYSTEM.value
    found = Preference.objects.filter(user=user).values_list("color_scheme", flat=True).first()
    return found or ColorScheme.SYSTEM.value


def color_scheme_set(*, user: Any, scheme: object) -> str:
    if not isinstance(scheme, str) or scheme not in ColorScheme.values:
        names = ", ".join(ColorScheme.values)
        raise invalid_argument(f"scheme is one of {names}", field="scheme")
    Preference.objects.update_or_create(user=user, defaults={"color_scheme": scheme})
    return scheme
