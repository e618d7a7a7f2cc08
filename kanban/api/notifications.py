"""REST endpoints for the caller's inbox: list it (newest first, paged) and mark read.
Thin: parse, call one service, render."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.api.configurations import check_body
from kanban.api.query import check_query
from kanban.api.schema import json_body, operations, page_parameters, whole
from kanban.data.notifications import (
    DEFAULT_LIST,
    MAX_ID,
    MAX_LIST,
    MAX_READ,
    notifications_list,
    notifications_read,
)
from storage.errors import invalid_argument

operation = operations("notifications")


class PersonSerializer(serializers.Serializer[Any]):
    username = serializers.CharField()
    displayName = serializers.CharField()


class BoardSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    name = serializers.CharField()


class NotificationSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    text = serializers.CharField()
    board = BoardSerializer()
    card = serializers.CharField(allow_null=True)
    url = serializers.CharField(help_text="the board's page, opening the card when named")
    sender = PersonSerializer(allow_null=True, help_text="who sent it (null: gone since)")
    via = serializers.CharField()
    createdAt = serializers.DateTimeField()
    read = serializers.BooleanField()


class InboxSerializer(serializers.Serializer[Any]):
    notifications = NotificationSerializer(many=True)
    unread = serializers.IntegerField()
    cursor = serializers.IntegerField(allow_null=True, help_text="pass as before for more")


class ReadSerializer(serializers.Serializer[Any]):
    read = serializers.IntegerField(help_text="how many were unread and now are read")


class NotificationListView(APIView):
    @operation(
        "notifications_list",
        description="The caller's notifications, of boards they belong to, newest first.",
        parameters=page_parameters(
            limit=MAX_LIST, default=DEFAULT_LIST, cursor="before", first=1, last=MAX_ID
        ),
        responses={200: InboxSerializer},
    )
    def get(self, request: Request) -> Response:
        arguments = check_query(
            request.query_params, allowed=("limit", "before"), numbers=("limit", "before")
        )
        return Response(notifications_list(user=request.user, **arguments))


class NotificationReadView(APIView):
    @operation(
        "notifications_read",
        description="Marks the notifications named by ``ids`` read, or all of them when the "
        "body names none.",
        request=json_body(
            ids={"type": "array", "items": whole(minimum=1, maximum=MAX_ID), "maxItems": MAX_READ}
        ),
        responses={200: ReadSerializer},
    )
    def post(self, request: Request) -> Response:
        # No body at all marks every one read; a body is an object like any other.
        data = request.data
        body = check_body({} if isinstance(data, dict) and not data else data, allowed=("ids",))
        if "ids" in body and body["ids"] is None:
            raise invalid_argument("ids is a list of notification ids", field="ids")
        return Response({"read": notifications_read(user=request.user, ids=body.get("ids"))})
