"""REST endpoints for the boards offered to the caller: list them, accept one (joining the
board with its role) or decline it. Thin: parse, call one service, render."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.api.notifications import BoardSerializer, PersonSerializer
from kanban.api.schema import operations
from kanban.data.members import offer_accept, offer_decline, offers_mine
from kanban.models import Role

operation = operations("offers")


class OfferSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    board = BoardSerializer()
    role = serializers.ChoiceField(choices=Role.values)
    offeredBy = PersonSerializer()
    createdAt = serializers.DateTimeField()


class OfferListSerializer(serializers.Serializer[Any]):
    offers = OfferSerializer(many=True)


class AcceptedSerializer(serializers.Serializer[Any]):
    projectId = serializers.UUIDField(help_text="the board the caller is now a member of")


class OfferListView(APIView):
    @operation(
        "offers_list",
        description="The boards their owners offered the caller, newest first: the caller "
        "is on none of them until they accept.",
        responses={200: OfferListSerializer},
    )
    def get(self, request: Request) -> Response:
        return Response({"offers": offers_mine(user=request.user)})


class OfferAcceptView(APIView):
    @operation(
        "offer_accept",
        description="The caller joins the board with the offered role (or keeps a higher "
        "one); `not_found` when the offer is gone or whoever made it no longer owns the board.",
        request=None,
        responses={200: AcceptedSerializer},
    )
    def post(self, request: Request, offer_id: int) -> Response:
        project = offer_accept(user=request.user, offer_id=offer_id)
        return Response({"projectId": str(project.id)})


class OfferDeclineView(APIView):
    @operation(
        "offer_decline",
        description="The offer leaves the caller's inbox and the board stays as it was; "
        "it cannot offer itself to the caller again for 30 days.",
        request=None,
        responses={204: None},
    )
    def post(self, request: Request, offer_id: int) -> Response:
        offer_decline(user=request.user, offer_id=offer_id)
        return Response(status=204)
