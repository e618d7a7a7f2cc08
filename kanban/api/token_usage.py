"""REST for token usage: a project's (or a conversation's) totals for its members, and the
system total, summed from the projects', for staff."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.api.schema import operations, text
from kanban.data.token_usage import FIELDS, USAGE_KEY, project_token_usage, system_token_usage
from storage.errors import ErrorCode, KanbanError
from storage.namespaces import MAX_CONVERSATION_ID_LENGTH

operation = operations("token usage")


class UsageSerializer(serializers.Serializer[Any]):
    """Cumulative totals; `malformed` when the stored value was not an object of counters."""

    totalTokens = serializers.IntegerField(help_text="input + output")
    malformed = serializers.BooleanField()

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # One counter per name the runtime keeps (``FIELDS``), so the schema cannot drift.
        counters = {name: serializers.IntegerField() for name in FIELDS}
        return {**counters, **super().get_fields()}


class ProjectUsageSerializer(UsageSerializer):
    projectId = serializers.UUIDField()
    name = serializers.CharField()


class SystemUsageSerializer(serializers.Serializer[Any]):
    total = UsageSerializer()
    projects = ProjectUsageSerializer(many=True)


DESCRIPTION = (
    f"The runtime keeps cumulative totals in the project's KV under `{USAGE_KEY}` "
    f"(a JSON object of non-negative integers: {', '.join(f'`{name}`' for name in FIELDS)}), "
    "and in a conversation's KV under the same key."
)


class ProjectTokenUsageView(APIView):
    @operation(
        "project_token_usage",
        description=DESCRIPTION,
        parameters=[
            OpenApiParameter(
                "conversationId",
                text(max_length=MAX_CONVERSATION_ID_LENGTH),
                description="one conversation's",
            )
        ],
        responses={200: UsageSerializer},
    )
    def get(self, request: Request, project_id: Any) -> Response:
        usage = project_token_usage(
            user=request.user,
            project_id=project_id,
            conversation_id=request.query_params.get("conversationId"),
        )
        return Response(usage.as_dict())


class SystemTokenUsageView(APIView):
    @operation(
        "system_token_usage",
        description="Staff only. The sum of every project's totals; the server keeps no "
        "system-wide record of its own. " + DESCRIPTION,
        responses={200: SystemUsageSerializer},
    )
    def get(self, request: Request) -> Response:
        if not request.user.is_staff:
            raise KanbanError(ErrorCode.FORBIDDEN, "the system total is for staff")
        usage = system_token_usage()
        projects = [
            {"projectId": str(project.id), "name": project.name, **row.as_dict()}
            for project, row in usage.projects
        ]
        return Response({"total": usage.total.as_dict(), "projects": projects})
