"""board_cards actions on a Board's columns, as its column dialog changes them: add one
(a title and a WIP limit, 0 for none), rename one or change its limit, or move it. Each is a
compare-and-set on ``board:columns`` as stored now; a board without columns starts from the
defaults, as the page writes them on opening it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from kanban.data.board import layout
from kanban.data.board.races import retrying
from storage.errors import ErrorCode, KanbanError, invalid_argument

if TYPE_CHECKING:
    from kanban.data.board.cards import Call

#: The page's column dialog: "a whole number from 0 to 999" (0: no limit).
MAX_WIP: Final = 999


def _title(value: object) -> str:
    return layout.check_shown_text(
        value, needs="a column needs a title", named="a title", limit=layout.MAX_TEXT, field="title"
    )


def _wip(value: object) -> int:
    if type(value) is not int or not 0 <= value <= MAX_WIP:
        raise invalid_argument(
            f"the WIP limit is a whole number from 0 to {MAX_WIP} (0: none)", field="wip"
        )
    return value


def column_add(call: Call) -> Any:
    column: dict[str, Any] = {
        "id": layout.new_id(),
        "title": _title(call.arguments.get("title")),
        "wip": _wip(call.arguments.get("wip", 0)),
    }
    return _changed(call, column["id"], lambda columns: [*columns, column])


def _column_id(call: Call) -> str:
    return call.id_of("column", "a column's id")


def _check_present(columns: list[dict[str, Any]], column_id: str) -> None:
    if column_id not in {column["id"] for column in columns}:
        raise KanbanError(
            ErrorCode.NOT_FOUND, f"no column {column_id!r} on this board", field="column"
        )


def column_reorder(call: Call) -> Any:
    """One column to ``position`` (0 first; past the end: last), the others as stored now."""
    column_id = _column_id(call)
    position = layout.check_position(call.arguments.get("position"))

    def reorder(columns: list[dict[str, Any]]) -> list[dict[str, Any]]:
        _check_present(columns, column_id)
        return layout.moved_to(columns, column_id, position)

    return _changed(call, column_id, reorder)


def column_update(call: Call) -> Any:
    column_id = _column_id(call)
    change: dict[str, Any] = {}
    if "title" in call.arguments:
        change["title"] = _title(call.arguments["title"])
    if "wip" in call.arguments:
        change["wip"] = _wip(call.arguments["wip"])
    if not change:
        raise invalid_argument("column_update needs title and/or wip", field="title")

    def update(columns: list[dict[str, Any]]) -> list[dict[str, Any]]:
        _check_present(columns, column_id)
        return [{**c, **change} if c["id"] == column_id else c for c in columns]

    return _changed(call, column_id, update)


def _changed(call: Call, column_id: str, change: Any) -> dict[str, Any]:
    result: dict[str, Any] = {}

    def write() -> None:
        entry = call.get(layout.COLUMNS_KEY)
        columns = (
            [dict(column) for column in layout.DEFAULT_COLUMNS]
            if entry is None
            else layout.normalize_columns(entry.value)
        )
        written = change(columns)
        call.set(layout.COLUMNS_KEY, written, None if entry is None else entry.revision)
        result["columns"] = written

    retrying(write)
    column = next(c for c in result["columns"] if c["id"] == column_id)
    return {"column": column, "columns": result["columns"]}
