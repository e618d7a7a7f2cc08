"""REST endpoints for a board's invite links: its owners make, list and revoke them. Thin:
parse, call one service, render."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.accounts.invites import (
    MAX_DAYS,
    MAX_USES,
    check_email,
    invite_create,
    invite_email,
    invite_revoke,
    invites_list,
)
from kanban.api.configurations import check_body
from kanban.api.schema import json_body, operations
from kanban.models import Invite, Role
from storage.errors import KanbanError

operation = operations("projects")


def render_invite(invite: Invite) -> dict[str, Any]:
    return {
        "id": invite.pk,
        "role": invite.role,
        "createdBy": invite.created_by.get_username(),
        "createdAt": invite.created_at.isoformat(),
        "expiresAt": invite.expires_at.isoformat(),
        "uses": invite.uses,
        "maxUses": invite.max_uses,
    }


class InviteSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    role = serializers.ChoiceField(choices=Role.values)
    createdBy = serializers.CharField()
    createdAt = serializers.DateTimeField()
    expiresAt = serializers.DateTimeField()
    uses = serializers.IntegerField()
    maxUses = serializers.IntegerField()


class CreatedInviteSerializer(InviteSerializer):
    url = serializers.URLField(help_text="the link to send; shown only in this answer")
    emailed = serializers.EmailField(required=False, help_text="where the link was sent")
    emailError = serializers.DictField(
        required=False, help_text="why it was not sent (not_supported: no mail server)"
    )


class InviteListSerializer(serializers.Serializer[Any]):
    invites = InviteSerializer(many=True)


class RevokedSerializer(serializers.Serializer[Any]):
    revoked = serializers.BooleanField(help_text="false when the link had already ended")


class InviteListView(APIView):
    @operation(
        "invites_list",
        description="The board's working invite links, newest first; owners only.",
        responses={200: InviteListSerializer},
    )
    def get(self, request: Request, project_id: Any) -> Response:
        found = invites_list(actor=request.user, project_id=project_id)
        return Response({"invites": [render_invite(invite) for invite in found]})

    @operation(
        "invite_create",
        description="An owner's new invite link for a role: a person who opens it joins the "
        "board with that role (choosing a username and password if they have no account).",
        request=json_body(
            required=("role",),
            role={"type": "string", "enum": Role.values},
            days={"type": "integer", "minimum": 1, "maximum": MAX_DAYS, "default": 7},
            uses={"type": "integer", "minimum": 1, "maximum": MAX_USES, "default": 1},
            email={"type": "string", "format": "email", "description": "send it there too"},
        ),
        responses={201: CreatedInviteSerializer},
    )
    def post(self, request: Request, project_id: Any) -> Response:
        body = check_body(
            request.data, allowed=("role", "days", "uses", "email"), required=("role",)
        )
        to = body.pop("email", None)
        if "email" in request.data:
            check_email(to)
        created = invite_create(actor=request.user, project_id=project_id, **body)
        url = request.build_absolute_uri(created.path)
        answer = {**render_invite(created.invite), "url": url}
        if to is not None:
            # The link stands either way; the answer says whether the mail went.
            try:
                invite_email(actor=request.user, created=created, url=url, to=to)
            except KanbanError as error:
                answer["emailError"] = error.as_dict()
            else:
                answer["emailed"] = to
        return Response(answer, status=201)


class InviteView(APIView):
    http_method_names = ["delete", "options"]

    @operation(
        "invite_revoke",
        parameters=[OpenApiParameter("invite_id", int, OpenApiParameter.PATH)],
        responses={200: RevokedSerializer},
    )
    def delete(self, request: Request, project_id: Any, invite_id: int) -> Response:
        revoked = invite_revoke(actor=request.user, project_id=project_id, invite_id=invite_id)
        return Response({"revoked": revoked})
