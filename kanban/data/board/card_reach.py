"""board_cards actions that reach past the board: copy or move a card to another Board
(``card_transfer``, as REST's and the bridge's card transfers) and search cards across
Boards (``search``, as REST's ``search/cards``). Through a token, only the boards the token
reaches: a board outside it is ``not_found`` (``access_token_scope``, the rule REST applies
to a transfer's target), and a search reads only its boards."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from uuid import UUID

from kanban.accounts.tokens import access_token_scope, token_projects
from kanban.data.board import search as board_search
from storage.errors import KanbanError, invalid_argument

if TYPE_CHECKING:
    from kanban.data.board.cards import Call


def copy_to_board(call: Call) -> Any:
    return _transfer(call, move=False)


def move_to_board(call: Call) -> Any:
    return _transfer(call, move=True)


def _transfer(call: Call, *, move: bool) -> Any:
    # Imported here: card_transfer reads the Board check from cards, which imports this.
    from kanban.data.board import card_transfer

    card = call.card_id()
    try:
        target = UUID(str(call.arguments.get("board")))
    except ValueError:
        raise invalid_argument("board is a board's id", field="board") from None
    if call.token is not None:
        access_token_scope(token=call.token, project_id=target, write=True)
    return card_transfer.card_copy_or_move(
        user=call.user,
        project_id=call.project_id,
        card=card,
        target_project_id=target,
        column=call.arguments.get("column"),
        provenance=call.provenance,
        move=move,
    )


def search(call: Call) -> Any:
    """``cards_search``'s answer, its cursor as text (the tool's cursors are)."""
    raw = call.arguments.get("cursor")
    if raw is not None and not (isinstance(raw, str) and raw.isdigit()):
        raise invalid_argument("cursor is one a search answered", field="cursor")
    try:
        found = board_search.cards_search(
            user=call.user,
            query=call.arguments.get("text"),
            limit=call.arguments.get("limit", board_search.DEFAULT_LIMIT),
            cursor=0 if raw is None else int(raw),
            boards=None if call.token is None else token_projects(call.token),
        )
    except KanbanError as error:
        if error.details.get("field") == "q":  # the tool names the query text
            error.details["field"] = "text"
        raise
    cursor = found["cursor"]
    return {**found, "cursor": None if cursor is None else str(cursor)}
