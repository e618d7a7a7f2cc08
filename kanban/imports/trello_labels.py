"""The board's label set (``board:labels``, ``[{name, color}]``) an import writes from the
export's labels, so the Board page shows each label in Trello's colour.

Colours are Trello's ten base names: its ``_dark`` and ``_light`` variants show as their base
(the page keeps one palette of readable colours). A label without a colour is left out of the
set: the Board shows it as it shows any label it has no colour for.
"""

from __future__ import annotations

from typing import Any, Final

from kanban.data.board import labels as board_labels
from kanban.imports.trello_shape import Export

#: The Board's KV key for its label set (rendered by bridge_js/plugins/board).
BOARD_LABELS_KEY: Final = "board:labels"
#: The Board's palette, one copy (kanban.data.board.labels).
COLOURS: Final = frozenset(board_labels.COLOURS)
VARIANTS: Final = ("_dark", "_light")


def base_colour(color: object) -> str | None:
    """Trello's colour as one of the base names, or None (no colour, or one unknown)."""
    if not isinstance(color, str):
        return None
    color = color.strip().lower()
    for variant in VARIANTS:
        color = color.removesuffix(variant)
    return color if color in COLOURS else None


def label_set(export: Export, *, names: dict[str, str]) -> list[dict[str, str]]:
    """The export's coloured labels as the Board names them (``names``: label id to the
    name its cards carry), first of each name only (the page matches names case-blind)."""
    found: list[dict[str, str]] = []
    seen: set[str] = set()
    for label_id, label in export.labels.items():
        name, colour = names.get(label_id, ""), base_colour(label.get("color"))
        if name and colour and name.casefold() not in seen:
            seen.add(name.casefold())
            found.append({"name": name, "color": colour})
    return found


def label_set_merged(
    imported: list[dict[str, str]], *, current: object, imported_before: set[str]
) -> list[dict[str, str]]:
    """The set to write on a board: Trello's labels, then the board's own, the ones an
    earlier import wrote (``imported_before``, casefolded names) and Trello no longer has
    left out."""
    names = {item["name"].casefold() for item in imported}
    local: list[dict[str, str]] = []
    for item in current if isinstance(current, list) else []:
        if not _entry(item):
            continue
        name = item["name"].casefold()
        if name not in names and name not in imported_before:
            names.add(name)
            local.append({"name": item["name"], "color": item["color"]})
    return imported + local


def _entry(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("name"), str)
        and bool(item["name"])
        and isinstance(item.get("color"), str)
    )
