"""One face per person on every page: initials and a colour from the username.

The rule is the Board plugin's (``hue`` and ``initials`` in
``bridge_js/plugins/board/board-state.js``), so a person looks the same on the dashboard,
the members page, the inbox and the cards: the hue is ``h = (h * 31 + code point) % 360``
over the lowercased username, drawn as ``hsl(h 55% 48%)`` behind white initials (the first
letters of the first and last words of the display name). bridge_js/README.md states it
for other plugins.
"""

from __future__ import annotations

from typing import Any


def avatar_hue(username: str) -> int:
    hue = 0
    for char in username.lower():
        hue = (hue * 31 + ord(char)) % 360
    return hue


def avatar_initials(display_name: str, username: str = "") -> str:
    words = display_name.split() or username.split() or ["?"]
    first, last = words[0], words[-1] if len(words) > 1 else ""
    return (first[:1] + last[:1]).upper()


def avatar(*, username: str, display_name: str, **extra: Any) -> dict[str, Any]:
    """What ``templates/kanban/includes/avatar.html`` draws."""
    return {
        "username": username,
        "display_name": display_name,
        "initials": avatar_initials(display_name, username),
        "hue": avatar_hue(username),
        **extra,
    }
