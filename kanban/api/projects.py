"""REST endpoints for the caller's projects and their members: list and create (from a
template), archive and restore, and the members an owner manages. Thin: parse, call one
service, render."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.access.memberships import Member, members_list
from kanban.api.configurations import check_body
from kanban.api.notifications import PersonSerializer
from kanban.api.schema import NO_NUL, PLAIN, json_body, operations, text
from kanban.data.members import PendingOffer, member_set, offers_of_board
from kanban.models import Role
from kanban.projects.board_templates import Template, board_create
from kanban.projects.lifecycle import (
    MAX_NAME_LENGTH,
    NAME_PATTERN,
    project_archive,
    project_delete_by_owner,
)
from kanban.projects.listing import (
    MAX_QUERY_LENGTH,
    Listed,
    Sort,
    project_listed,
    projects_listed,
)
from storage.errors import invalid_argument

operation = operations("projects")


def render_member(member: Member | PendingOffer) -> dict[str, Any]:
    """A member, or the member a pending offer would make (what the owners see of it)."""
    return {
        "username": member.username,
        "displayName": member.display_name,
        "role": str(member.role),
    }


def render_project(item: Listed) -> dict[str, Any]:
    change = item.last_change
    return {
        "projectId": str(item.project.id),
        "name": item.project.name,
        "type": item.project.type,
        "role": str(item.role),
        "archived": item.project.archived_at is not None,
        "createdAt": item.project.created_at.isoformat(),
        "members": [render_member(member) for member in item.members],
        "lastChange": None
        if change is None
        else {"at": change.at.isoformat(), "username": change.username, "displayName": change.by},
    }


def render_pending_offer(offer: PendingOffer) -> dict[str, Any]:
    return {
        **render_member(offer),
        "offeredBy": offer.offered_by,
        "createdAt": offer.created_at.isoformat(),
    }


def check_flag(raw: str | None, *, field: str) -> bool:
    if raw in (None, "", "false"):
        return False
    if raw == "true":
        return True
    raise invalid_argument(f"{field} must be true or false, not {raw!r}", field=field)


# --- OpenAPI (these serializers only document what ``render_*`` writes) -----------------------


class MemberSerializer(PersonSerializer):
    role = serializers.ChoiceField(choices=Role.values)


class LastChangeSerializer(serializers.Serializer[Any]):
    """The project's newest stored value: when, and the user its write source names."""

    at = serializers.DateTimeField()
    username = serializers.CharField(allow_null=True)
    displayName = serializers.CharField(allow_null=True)


class ProjectSerializer(serializers.Serializer[Any]):
    projectId = serializers.UUIDField()
    name = serializers.CharField()
    type = serializers.CharField()
    role = serializers.ChoiceField(choices=Role.values, help_text="the caller's role")
    archived = serializers.BooleanField()
    createdAt = serializers.DateTimeField()
    members = MemberSerializer(many=True)
    lastChange = LastChangeSerializer(allow_null=True)


class ProjectListSerializer(serializers.Serializer[Any]):
    projects = ProjectSerializer(many=True)


class MemberListSerializer(serializers.Serializer[Any]):
    members = MemberSerializer(many=True)


class MemberChangedSerializer(serializers.Serializer[Any]):
    changed = serializers.BooleanField(help_text="false when the member already had it")


class MemberOfferedSerializer(MemberChangedSerializer):
    offered = serializers.BooleanField(
        help_text="true when the person is not on the board: they are offered the role and "
        "join once they accept it (the same answer for a username nobody holds)"
    )


class PendingOfferSerializer(MemberSerializer):
    offeredBy = serializers.CharField(help_text="the owner's username")
    createdAt = serializers.DateTimeField()


class PendingOfferListSerializer(serializers.Serializer[Any]):
    offers = PendingOfferSerializer(many=True)


ONE = OpenApiResponse(response=ProjectSerializer, description="one project")
USERNAME = OpenApiParameter(
    "username", text(pattern=PLAIN), OpenApiParameter.PATH, description="a username"
)


# --- views -------------------------------------------------------------------------------------


class ProjectListView(APIView):
    @operation(
        "projects_list",
        description="The projects the caller is a member of (a superuser: every project), "
        "with the caller's role, by name or by last change.",
        parameters=[
            OpenApiParameter(
                "q",
                text(min_length=0, max_length=MAX_QUERY_LENGTH, pattern=NO_NUL),
                description="only names containing this, any case",
            ),
            OpenApiParameter("sort", str, enum=list(Sort), description="default `name`"),
            OpenApiParameter("archived", bool, description="the archived projects instead"),
        ],
        responses={200: ProjectListSerializer},
    )
    def get(self, request: Request) -> Response:
        listed = projects_listed(
            user=request.user,
            query=request.query_params.get("q", ""),
            sort=request.query_params.get("sort"),
            archived=check_flag(request.query_params.get("archived"), field="archived"),
        )
        return Response({"projects": [render_project(item) for item in listed]})

    @operation(
        "projects_create",
        description="A new board from a template, with the caller as its owner, its own "
        "copy of the template's plugin files and no relationships.",
        request=json_body(
            required=("name", "template"),
            name=text(max_length=MAX_NAME_LENGTH, pattern=NAME_PATTERN),
            template={"type": "string", "enum": list(Template)},
        ),
        responses={201: ONE},
    )
    def post(self, request: Request) -> Response:
        body = check_body(request.data, allowed=("name", "template"), required=("name", "template"))
        project = board_create(user=request.user, name=body["name"], template=body["template"])
        return Response(
            render_project(project_listed(user=request.user, project_id=project.id)), status=201
        )


class ProjectView(APIView):
    http_method_names = ["get", "patch", "delete", "options"]

    @operation("project_get", responses={200: ONE})
    def get(self, request: Request, project_id: Any) -> Response:
        return Response(render_project(project_listed(user=request.user, project_id=project_id)))

    @operation(
        "project_archive",
        description="An owner archives the project (off every dashboard, data kept) or "
        "restores it.",
        request=json_body(required=("archived",), archived={"type": "boolean"}),
        responses={200: ONE},
    )
    def patch(self, request: Request, project_id: Any) -> Response:
        body = check_body(request.data, allowed=("archived",), required=("archived",))
        project_archive(actor=request.user, project_id=project_id, archived=body["archived"])
        return Response(render_project(project_listed(user=request.user, project_id=project_id)))

    @operation(
        "project_delete",
        description="An owner deletes the project for good: its KV, Knowledge, history, "
        "configurations and memberships go with it, in one transaction, and its open boards "
        "close.",
        responses={204: None},
    )
    def delete(self, request: Request, project_id: Any) -> Response:
        project_delete_by_owner(actor=request.user, project_id=project_id)
        return Response(status=204)


class MemberListView(APIView):
    @operation(
        "members_list",
        description="Every member may see them.",
        responses={200: MemberListSerializer},
    )
    def get(self, request: Request, project_id: Any) -> Response:
        found = members_list(user=request.user, project_id=project_id)
        return Response({"members": [render_member(member) for member in found]})


class MemberView(APIView):
    """An owner changes a member's role or removes a member, at once (the member's open
    boards re-check their access), and offers the board to someone not on it yet; any
    member removes themselves. ``conflict`` when it would leave no owner."""

    http_method_names = ["put", "delete", "options"]

    @operation(
        "member_set",
        description="A member gets the role at once; anyone else is offered it and joins "
        "once they accept (`/api/v1/offers/`).",
        parameters=[USERNAME],
        request=json_body(required=("role",), role={"type": "string", "enum": Role.values}),
        responses={200: MemberOfferedSerializer},
    )
    def put(self, request: Request, project_id: Any, username: str) -> Response:
        body = check_body(request.data, allowed=("role",), required=("role",))
        if body["role"] in (None, "none"):
            raise invalid_argument("a role is guest, developer or owner; DELETE removes")
        change = member_set(
            actor=request.user, project_id=project_id, username=username, role=body["role"]
        )
        return Response({"changed": change.changed, "offered": change.offered})

    @operation(
        "member_remove",
        description="An owner removes a member, or withdraws the offer made to them; any "
        "member removes themselves (leaves), but not the board's last owner.",
        parameters=[USERNAME],
        responses={200: MemberChangedSerializer},
    )
    def delete(self, request: Request, project_id: Any, username: str) -> Response:
        change = member_set(actor=request.user, project_id=project_id, username=username, role=None)
        return Response({"changed": change.changed})


class PendingOfferListView(APIView):
    @operation(
        "board_offers_list",
        description="The board's offers nobody has answered yet, newest first; for its "
        "owners. `DELETE .../members/{username}` withdraws one.",
        responses={200: PendingOfferListSerializer},
    )
    def get(self, request: Request, project_id: Any) -> Response:
        found = offers_of_board(actor=request.user, project_id=project_id)
        return Response({"offers": [render_pending_offer(offer) for offer in found]})
