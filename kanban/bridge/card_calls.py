"""The Board's card transfers over the bridge: the Boards a card may go to, and a copy or a
move there, as REST's ``POST .../cards/<card>/copy|move`` (``kanban.data.board.
card_transfer``). The card travels in ``key``, the target in ``value``: ``{targetProject,
column}``. A transfer starts from the page's own board, never a related one's."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from kanban.bridge.frames import Request
from kanban.data.board import card_transfer
from kanban.data.board.transfer_targets import card_transfer_targets
from kanban.data.kv import Provenance
from storage.errors import invalid_argument


def card_call(*, user: Any, consumer_id: UUID, page: str, request: Request) -> Any:
    if request.alias is not None:
        raise invalid_argument("a card is copied or moved from this board", field="alias")
    if request.op == "cards.targets":
        return card_transfer_targets(user=user, project_id=consumer_id)
    value = request.value if isinstance(request.value, dict) else {}
    try:
        target = UUID(str(value.get("targetProject")))
    except ValueError:
        raise invalid_argument("targetProject is a board's id", field="targetProject") from None
    column = value.get("column")
    if column is not None and not isinstance(column, str):
        raise invalid_argument("column is a column id", field="column")
    service = card_transfer.card_move if request.op == "cards.move" else card_transfer.card_copy
    return service(
        user=user,
        project_id=consumer_id,
        card=request.key or "",
        target_project_id=target,
        column=column,
        provenance=Provenance(via="bridge", page=page),
    )
