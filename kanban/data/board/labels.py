"""board_cards actions on the board's label set (``board:labels``, ``[{name, color}]``), as
the Board's label dialog changes it (bridge_js/plugins/board/board-labels.js,
board-pickers.js): list it as the page shows it; add one; rename and/or recolour one, the
cards carrying it renamed too; remove one, and it comes off every card, as the page's
Delete does. A name is trimmed with its spaces collapsed, holds no comma (cards' labels are
read as a comma-joined list) and is unique in the set, any case. Each write is a
compare-and-set on what is stored now; an entry the page cannot read is kept as it is."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from kanban.data.board import layout
from kanban.data.board.races import retrying
from storage.errors import ErrorCode, KanbanError, invalid_argument

if TYPE_CHECKING:
    from kanban.data.board.cards import Call

#: board-labels.js LABEL_COLOURS (Trello's ten base colours) and its MAX_SET.
COLOURS: Final = (
    "green",
    "yellow",
    "orange",
    "red",
    "purple",
    "blue",
    "sky",
    "lime",
    "pink",
    "black",
)
MAX_SET: Final = 200


def _fold(name: str) -> str:
    return name.strip().casefold()


def _named(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("name"), str)
        and bool(entry["name"].strip())
    )


def label_set(value: object) -> list[dict[str, str]]:
    """The set as the page shows it (labelSet): first of each name, palette colours only."""
    seen: set[str] = set()
    shown = []
    for entry in (value if isinstance(value, list) else [])[:MAX_SET]:
        if not _named(entry) or entry["color"] not in COLOURS or _fold(entry["name"]) in seen:
            continue
        seen.add(_fold(entry["name"]))
        shown.append({"name": entry["name"].strip(), "color": entry["color"]})
    return shown


def check_label_name(value: object, *, field: str) -> str:
    name = re.sub(r"\s+", " ", value.strip()) if isinstance(value, str) else ""
    if not name:
        raise invalid_argument("a label needs a name", field=field)
    if "," in name:
        raise invalid_argument("a label's name cannot hold a comma", field=field)
    if len(name) > layout.MAX_LABEL:
        raise invalid_argument(
            f"a label's name is at most {layout.MAX_LABEL} characters", field=field
        )
    return name


def _colour(value: object) -> str:
    if value not in COLOURS:
        raise invalid_argument(f"color is one of {', '.join(COLOURS)}", field="color")
    return str(value)


def labels(call: Call) -> Any:
    entry = call.get(layout.LABELS_KEY)
    return {"labels": label_set(None if entry is None else entry.value)}


def label_add(call: Call) -> Any:
    name, colour = (
        check_label_name(call.arguments.get("label"), field="label"),
        _colour(call.arguments.get("color")),
    )

    def add(current: list[Any]) -> list[Any]:
        if any(_named(e) and _fold(e["name"]) == _fold(name) for e in current):
            raise KanbanError(ErrorCode.CONFLICT, f"the board has a label {name!r}", field="label")
        if len([e for e in current if _named(e)]) >= MAX_SET:
            raise KanbanError(
                ErrorCode.TOO_LARGE, f"a board holds at most {MAX_SET} labels", field="label"
            )
        return [*current, {"name": name, "color": colour}]

    return _answer(_set_changed(call, add), name)


def label_update(call: Call) -> Any:
    old = check_label_name(call.arguments.get("label"), field="label")
    new = (
        check_label_name(call.arguments["name"], field="name") if "name" in call.arguments else None
    )
    colour = _colour(call.arguments["color"]) if "color" in call.arguments else None
    if new is None and colour is None:
        raise invalid_argument("label_update needs name and/or color", field="name")

    def update(current: list[Any]) -> list[Any]:
        at = _at(current, old)
        name = new if new is not None else current[at]["name"].strip()
        if _fold(name) != _fold(old) and any(
            _named(e) and _fold(e["name"]) == _fold(name) for e in current
        ):
            raise KanbanError(ErrorCode.CONFLICT, f"the board has a label {name!r}", field="name")
        changed = {**current[at], "name": name}
        if colour is not None:
            changed["color"] = colour
        return [changed if i == at else e for i, e in enumerate(current)]

    written = _set_changed(call, update)
    if new is not None and new != old:
        _relabel(call, old, lambda held: _renamed(held, old, new))
    return _answer(written, new if new is not None else old)


def label_remove(call: Call) -> Any:
    name = check_label_name(call.arguments.get("label"), field="label")

    def remove(current: list[Any]) -> list[Any]:
        _at(current, name)
        return [e for e in current if not (_named(e) and _fold(e["name"]) == _fold(name))]

    written = _set_changed(call, remove)
    _relabel(call, name, lambda held: [x for x in held if _fold(x) != _fold(name)])
    return {"labels": label_set(written)}


def _at(current: list[Any], name: str) -> int:
    for at, entry in enumerate(current):
        if _named(entry) and _fold(entry["name"]) == _fold(name):
            return at
    raise KanbanError(ErrorCode.NOT_FOUND, f"the board has no label {name!r}", field="label")


def _answer(written: list[Any], name: str) -> dict[str, Any]:
    shown = label_set(written)
    return {"label": next(e for e in shown if _fold(e["name"]) == _fold(name)), "labels": shown}


def _set_changed(call: Call, change: Callable[[list[Any]], list[Any]]) -> list[Any]:
    written: list[list[Any]] = []

    def write() -> None:
        entry = call.get(layout.LABELS_KEY)
        current = entry.value if entry is not None and isinstance(entry.value, list) else []
        changed = change(list(current))
        call.set(layout.LABELS_KEY, changed, None if entry is None else entry.revision)
        written.append(changed)

    retrying(write)
    return written[-1]


def _renamed(held: list[str], old: str, new: str) -> list[str]:
    out: list[str] = []
    for label in held:
        label = new if _fold(label) == _fold(old) else label
        if _fold(label) not in {_fold(x) for x in out}:
            out.append(label)
    return out


def _relabel(call: Call, name: str, fix: Callable[[list[str]], list[str]]) -> None:
    """Each card carrying ``name`` gets its labels fixed, a change of its labels alone over
    the card as stored now (the page's relabelCards)."""
    for card, _ in call.read_board().cards:
        if not any(_fold(label) == _fold(name) for label in card["labels"]):
            continue

        def write(card_id: str = card["id"]) -> None:
            shown, entry = call.read_card(card_id)
            if any(_fold(label) == _fold(name) for label in shown["labels"]):
                stored = {**entry.value, "labels": fix(shown["labels"])}
                call.set(layout.card_key(card_id), stored, entry.revision)

        retrying(write)
