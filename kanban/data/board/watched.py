"""A Board as an agent reads it whole: the board (columns, labels, how many cards) and all of
its cards, for MCP resources (``kanban://boards/{id}`` and ``kanban://boards/{id}/cards``).

Read the way ``board_cards list`` reads (``cards.Call.read_board``: the same access decision
through ``kanban.data.kv``, the same normalised cards), so a resource never shows a card the
tool would not, nor one the token's person may not read.
"""

from __future__ import annotations

from typing import Any, Final
from uuid import UUID

from kanban.data.board import cards, layout
from kanban.data.kv import Provenance
from kanban.models import Project
from kanban.projects.package_changes import package_name
from storage.errors import KanbanError

#: Whose read this is, for the ``Call`` the board is read through (it writes nothing).
_READ: Final = Provenance(via="mcp")


def board_projects(project_ids: list[UUID]) -> list[Project]:
    """Those of ``project_ids`` that run the built-in Board, by name."""
    projects = Project.objects.filter(pk__in=project_ids).only("id", "name", "package_json")
    return sorted(
        (p for p in projects if package_name(p.package_json) == layout.BOARD_PACKAGE),
        key=lambda p: (p.name.casefold(), str(p.id)),
    )


def board_readable(*, user: Any, project_id: UUID) -> bool:
    """Whether this person may read the board's cards (the access decision of one read)."""
    try:
        cards.Call(user, project_id, {}, _READ).get(layout.COLUMNS_KEY)
    except KanbanError:
        return False
    return True


def board_read(*, user: Any, project_id: UUID) -> dict[str, Any]:
    """``{id, name, columns, labels, cardCount, archivedCount}``; refused as ``cards`` refuses
    (``not_found`` for a board this person may not read)."""
    cards.check_built_in_board(project_id)
    call = cards.Call(user, project_id, {}, _READ)
    board = call.read_board()
    labels = call.get(layout.LABELS_KEY)
    archived = sum(1 for card, _ in board.cards if card["archived"])
    project = Project.objects.only("name").get(pk=project_id)
    return {
        "id": str(project_id),
        "name": project.name,
        "columns": board.columns,
        "labels": labels.value if labels is not None and isinstance(labels.value, list) else [],
        "cardCount": len(board.cards) - archived,
        "archivedCount": archived,
    }


def board_cards_read(*, user: Any, project_id: UUID) -> dict[str, Any]:
    """``{id, cards}``: every card on the board that is not archived, each with its revision,
    in the order the Board shows them (column, then rank)."""
    cards.check_built_in_board(project_id)
    board = cards.Call(user, project_id, {}, _READ).read_board()
    shown = sorted(
        ((board.position(card), card["rank"], card["id"]), board.shown(card), revision)
        for card, revision in board.cards
        if not card["archived"]
    )
    return {
        "id": str(project_id),
        "cards": [{**card, "revision": revision} for _, card, revision in shown],
    }
