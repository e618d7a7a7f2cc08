"""REST search across boards: ``GET /api/v1/search/cards?q=``. Thin: parse, call one
service, render."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.accounts.tokens import token_projects
from kanban.api.notifications import BoardSerializer
from kanban.api.query import check_query
from kanban.api.schema import PLAIN, operations, page_parameters, text
from kanban.data.board.search import (
    DEFAULT_LIMIT,
    MAX_CURSOR,
    MAX_LIMIT,
    MAX_QUERY,
    cards_search,
)
from kanban.models import ApiToken

operation = operations("search")


# The inbox's board, kept as its own class for its own OpenAPI component, ResultBoard:
# clients generated from the schema know a search result's board by that name.
class ResultBoardSerializer(BoardSerializer):
    pass


class ResultCardSerializer(serializers.Serializer[Any]):
    id = serializers.CharField()
    title = serializers.CharField()
    column = serializers.CharField()
    archived = serializers.BooleanField()


class CardResultSerializer(serializers.Serializer[Any]):
    board = ResultBoardSerializer()
    card = ResultCardSerializer()
    matched = serializers.ChoiceField(choices=["title", "description", "comment"])
    excerpt = serializers.CharField()
    url = serializers.CharField(help_text="the board's page, opening the card")


class CardSearchSerializer(serializers.Serializer[Any]):
    results = CardResultSerializer(many=True)
    cursor = serializers.IntegerField(allow_null=True, help_text="pass back for the next page")


class CardSearchView(APIView):
    # A project-scoped token searches the boards it reaches, as the MCP tool does.
    token_projects_only = True

    @operation(
        "cards_search",
        description="Cards whose title, description or comments hold every word of q (any "
        "case), on every built-in Board the caller can read, boards by name and cards in "
        "board order. Bounded like a Knowledge search: too_large past its budget, "
        "rate_limited past the caller's running searches. A token scoped to projects "
        "searches only those.",
        parameters=[
            OpenApiParameter(
                "q", text(max_length=MAX_QUERY, pattern=PLAIN), required=True, description="words"
            ),
            *page_parameters(
                limit=MAX_LIMIT, default=DEFAULT_LIMIT, cursor="cursor", first=0, last=MAX_CURSOR
            ),
        ],
        responses={200: CardSearchSerializer},
    )
    def get(self, request: Request) -> Response:
        arguments = check_query(
            request.query_params, allowed=("q", "limit", "cursor"), numbers=("limit", "cursor")
        )
        query = arguments.pop("q", None)
        token = request.auth
        boards = token_projects(token) if isinstance(token, ApiToken) else None
        return Response(cards_search(user=request.user, query=query, boards=boards, **arguments))
