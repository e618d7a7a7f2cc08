"""REST endpoints that copy or move a card to another Board (``kanban.data.board.
card_transfer``). Thin: parse, call the service, render."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar
from uuid import UUID

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema_view
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.accounts.tokens import access_token_scope
from kanban.api.provenance import WRITE_HEADERS, rest_provenance
from kanban.api.schema import operations
from kanban.data.board import card_transfer, layout
from kanban.models import ApiToken
from storage.errors import invalid_argument

operation = operations("cards")
_View = TypeVar("_View", bound=type[APIView])


class TransferSerializer(serializers.Serializer[Any]):
    targetProject = serializers.UUIDField(help_text="the Board the card goes to")
    column = serializers.RegexField(
        layout.ID.pattern,
        required=False,
        help_text="a column of the target (default: one of the same id there, else its first)",
    )


ANSWER = OpenApiResponse(
    response=OpenApiTypes.OBJECT,
    description='{"projectId","card","column","moved","comments","attachments","assignees"}: '
    "the new card on the target",
)


def _target(request: Request) -> tuple[UUID, str | None]:
    body = request.data if isinstance(request.data, dict) else {}
    try:
        target = UUID(str(body.get("targetProject")))
    except ValueError:
        raise invalid_argument("targetProject is a board's id", field="targetProject") from None
    column = body.get("column")
    if column is not None and not isinstance(column, str):
        raise invalid_argument("column is a column id", field="column")
    if isinstance(request.auth, ApiToken):
        # The URL's project is checked by TokenScopePermission; the target is a second one.
        access_token_scope(token=request.auth, project_id=target, write=True)
    return target, column


class _TransferView(APIView):
    """The copy and the move take the same body and answer alike; ``move`` is all between
    them (and what their documentation says)."""

    move: ClassVar[bool]

    def post(self, request: Request, project_id: UUID, card: str) -> Response:
        target, column = _target(request)
        done = card_transfer.card_copy_or_move(
            user=request.user,
            project_id=project_id,
            card=card,
            target_project_id=target,
            column=column,
            provenance=rest_provenance(request),
            move=self.move,
        )
        return Response(done, status=201)


def _transfer_operation(operation_id: str, description: str) -> Callable[[_View], _View]:
    return extend_schema_view(
        post=operation(
            operation_id,
            parameters=WRITE_HEADERS,
            request=TransferSerializer,
            description=description,
            responses={201: ANSWER},
        )
    )


@_transfer_operation(
    "cards_copy",
    "Copy the card to a Board you can write (this one too), with its comments, checklist and "
    "attachments (files copied, counted in the target's quota). Needs read on this board.",
)
class CardCopyView(_TransferView):
    move = False


@_transfer_operation(
    "cards_move",
    "Move the card to another Board you can write, with its comments, checklist and "
    "attachments: it leaves this board in the same commit (its files' bytes come back to this "
    "board's quota). Needs read and write here: a guest cannot move a card.",
)
class CardMoveView(_TransferView):
    move = True
