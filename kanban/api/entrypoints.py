"""REST for entrypoints: which of a project's declared entrypoints the caller may see (its
own, or a related project's under the ``entrypoints`` grant), and the refusal to run one
here. Thin: parse, call ``kanban.data.entrypoints``, render."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.api.configurations import check_body
from kanban.api.schema import json_body, operations
from kanban.data import entrypoints as actions

operation = operations("entrypoints")


class EntrypointSerializer(serializers.Serializer[Any]):
    id = serializers.CharField()
    title = serializers.CharField()


class EntrypointListSerializer(serializers.Serializer[Any]):
    entrypoints = EntrypointSerializer(many=True)


class EntrypointListView(APIView):
    @operation(
        description="The project's `steamHarness.entrypoints` that the caller may see: all "
        "of its own, a related project's those its `entrypoints` grant covers.",
        responses={200: EntrypointListSerializer},
    )
    def get(self, request: Request, project_id: Any, alias: str | None = None) -> Response:
        found = actions.project_entrypoints_list(
            user=request.user, project_id=project_id, alias=alias
        )
        return Response({"entrypoints": found})


class EntrypointRunView(APIView):
    reads_only = True  # it never runs anything

    @operation(
        description="Always refused: entrypoints run locally, from the project's own "
        "directory; this server never starts a project. `not_supported` (422) for an "
        "entrypoint the grant covers, `forbidden` for one it does not.",
        request=json_body(args={"type": "array", "items": {"type": "string"}}),
        responses={422: OpenApiResponse(description="not_supported")},
    )
    def post(
        self, request: Request, project_id: Any, entrypoint_id: str, alias: str | None = None
    ) -> Response:
        body = check_body(request.data or {}, allowed=("args",))
        actions.project_entrypoint_run(
            user=request.user,
            project_id=project_id,
            alias=alias,
            entrypoint_id=entrypoint_id,
            args=body.get("args"),
        )
