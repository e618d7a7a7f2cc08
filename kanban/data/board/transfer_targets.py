"""The Boards a card of one Board may be copied or moved to (``card_transfer``): the
built-in Boards the person can write, this one among them when they can, each with its
columns, so a plugin can offer a board and a list without reading other projects itself.

Each board is decided by the one access decision, as the transfer will be: reading the
source here, writing a card there."""

from __future__ import annotations

from typing import Any, Final
from uuid import UUID

from kanban.access.decision import Op, access_project_data
from kanban.data.board import layout
from kanban.projects.boards import boards_for_user
from kanban.projects.package_changes import package_name
from storage import engine
from storage.errors import ErrorCode, KanbanError
from storage.namespaces import project_kv

#: The most boards one answer lists (by name); a person in more picks among these.
MAX_TARGETS: Final = 200


def card_transfer_targets(*, user: Any, project_id: UUID) -> list[dict[str, Any]]:
    """``[{id, name, current, columns: [{id, title}]}]`` by name: the Boards ``user`` may
    write a card on, ``current`` marking ``project_id``. Needs read on ``project_id``."""
    access_project_data(user=user, consumer_id=project_id, alias=None, op=Op.GET, key=None)
    out: list[dict[str, Any]] = []
    for board in boards_for_user(user=user).only("id", "name", "package_json"):
        if package_name(board.package_json) != layout.BOARD_PACKAGE:
            continue
        if not _writable(user, board.id):
            continue
        (columns,) = engine.get_values([project_kv(board.id, layout.COLUMNS_KEY)])
        shown = layout.normalize_columns(None if columns is None else columns.value)
        out.append(
            {
                "id": str(board.id),
                "name": board.name,
                "current": board.id == project_id,
                "columns": [{"id": c["id"], "title": c["title"]} for c in shown],
            }
        )
        if len(out) >= MAX_TARGETS:
            break
    return out


def _writable(user: Any, project_id: UUID) -> bool:
    try:
        access_project_data(
            user=user,
            consumer_id=project_id,
            alias=None,
            op=Op.SET,
            key=layout.card_key("x"),
        )
    except KanbanError as error:
        if error.code not in (ErrorCode.FORBIDDEN, ErrorCode.NOT_FOUND):
            raise
        return False
    return True
