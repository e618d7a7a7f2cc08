"""REST endpoints for the caller's own named configurations of a board. Thin: parse, call
one service from ``kanban.data.configurations``, render."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.api.schema import PLAIN, json_body, operations, text
from kanban.data import configurations as services
from kanban.data.configurations import DEFAULT_ID, UNSET, NamedConfiguration
from storage.errors import invalid_argument

#: The default configuration's id over REST: the one its path takes. The services and the
#: bridge know it as "" (plugins have always seen that), which no path segment can hold.
DEFAULT_IN_URL = "default"


def configuration_id_in_url(configuration_id: str) -> str:
    return DEFAULT_IN_URL if configuration_id == DEFAULT_ID else configuration_id


def configuration_id_from_url(raw: str) -> str:
    return DEFAULT_ID if raw == DEFAULT_IN_URL else raw


def named(request: Request, project_id: Any, configuration_id: str) -> dict[str, Any]:
    """The service arguments naming the caller's configuration that a URL names."""
    return {
        "user": request.user,
        "project_id": project_id,
        "configuration_id": configuration_id_from_url(configuration_id),
    }


def check_body(
    data: Any, *, allowed: tuple[str, ...], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A JSON object with only ``allowed`` fields; absent fields are left out (not None)."""
    if not isinstance(data, dict):
        raise invalid_argument("the body must be a JSON object")
    extra = sorted(set(data) - set(allowed))
    if extra:
        raise invalid_argument(f"unknown field {extra[0]!r}", field=extra[0])
    for name in required:
        if name not in data:
            raise invalid_argument(f"the body needs {name!r}", field=name)
    return {name: data[name] for name in allowed if name in data}


def render_configuration(configuration: NamedConfiguration) -> dict[str, Any]:
    def when(moment: Any) -> str | None:
        return None if moment is None else moment.isoformat()

    return {
        "id": configuration_id_in_url(configuration.id),
        "name": configuration.name,
        "values": configuration.values,
        "active": configuration.active,
        "createdAt": when(configuration.created_at),
        "updatedAt": when(configuration.updated_at),
    }


# --- OpenAPI ---------------------------------------------------------------------------------


# These serializers only document the responses; ``render_configuration`` renders them.


class ConfigurationSerializer(serializers.Serializer[Any]):
    """One of the caller's named configurations of a board."""

    id = serializers.CharField(help_text=f'a UUID; "{DEFAULT_IN_URL}" for the built-in default')
    name = serializers.CharField(max_length=100)
    values = serializers.DictField(help_text="a JSON object of at most 64 KiB")
    active = serializers.BooleanField()
    createdAt = serializers.DateTimeField(allow_null=True)
    updatedAt = serializers.DateTimeField(allow_null=True)


class ConfigurationListSerializer(serializers.Serializer[Any]):
    """The default (id "default") first, then the caller's own by name."""

    activeId = serializers.CharField()
    configurations = ConfigurationSerializer(many=True)


class ConfigurationDeletedSerializer(serializers.Serializer[Any]):
    """`active` is the default when the deleted configuration was the active one."""

    deleted = serializers.BooleanField()
    active = ConfigurationSerializer()


ONE = OpenApiResponse(response=ConfigurationSerializer, description="one configuration")
NAME = {
    **text(max_length=services.MAX_NAME_LENGTH, pattern=PLAIN),
    # Not the built-in one's name, in any case, once trimmed.
    "not": {"pattern": "^\\s*[Dd][Ee][Ff][Aa][Uu][Ll][Tt]\\s*$"},
}
VALUES = {"type": "object", "description": "a JSON object of at most 64 KiB"}
#: The default is addressable (its id is ``default``) but built in: naming it is fine, what
#: it is refuses the change.
BUILT_IN = OpenApiResponse(
    description=f"built_in: the `{DEFAULT_IN_URL}` configuration cannot be renamed or deleted"
)


CONFIGURATION_ID = OpenApiParameter(
    "configuration_id",
    str,
    OpenApiParameter.PATH,
    description=f"a configuration id, or `{DEFAULT_IN_URL}` for the built-in default",
)
operation = operations("configurations")


# --- views -----------------------------------------------------------------------------------


class ConfigurationListView(APIView):
    """The caller's configurations of one board."""

    @operation(
        "configurations_list",
        responses={200: ConfigurationListSerializer},
    )
    def get(self, request: Request, project_id: Any) -> Response:
        found = services.configuration_list(user=request.user, project_id=project_id)
        active = configuration_id_in_url(next(item.id for item in found if item.active))
        return Response(
            {"activeId": active, "configurations": [render_configuration(c) for c in found]}
        )

    @operation(
        "configurations_create",
        request=json_body(required=("name",), name=NAME, values=VALUES),
        responses={201: ONE},
    )
    def post(self, request: Request, project_id: Any) -> Response:
        body = check_body(request.data, allowed=("name", "values"), required=("name",))
        created = services.configuration_create(
            user=request.user,
            project_id=project_id,
            name=body["name"],
            values=body.get("values", UNSET),
        )
        return Response(render_configuration(created), status=201)


@extend_schema(parameters=[CONFIGURATION_ID])
class ConfigurationView(APIView):
    """One of the caller's configurations; another person's id is simply not found."""

    http_method_names = ["get", "patch", "delete", "options"]

    @operation("configuration_get", responses={200: ONE})
    def get(self, request: Request, project_id: Any, configuration_id: str) -> Response:
        found = services.configuration_get(**named(request, project_id, configuration_id))
        return Response(render_configuration(found))

    @operation(
        "configuration_update",
        request=json_body(name=NAME, values=VALUES),
        responses={200: ONE, 409: BUILT_IN},
    )
    def patch(self, request: Request, project_id: Any, configuration_id: str) -> Response:
        body = check_body(request.data, allowed=("name", "values"))
        updated = services.configuration_update(
            **named(request, project_id, configuration_id),
            name=body.get("name", UNSET),
            values=body.get("values", UNSET),
        )
        return Response(render_configuration(updated))

    @operation(
        "configuration_delete",
        responses={200: ConfigurationDeletedSerializer, 409: BUILT_IN},
    )
    def delete(self, request: Request, project_id: Any, configuration_id: str) -> Response:
        active = services.configuration_delete(**named(request, project_id, configuration_id))
        return Response({"deleted": True, "active": render_configuration(active)})


class ConfigurationDuplicateView(APIView):
    @operation(
        "configuration_duplicate",
        parameters=[CONFIGURATION_ID],
        request=json_body(name=NAME),
        responses={201: ONE},
    )
    def post(self, request: Request, project_id: Any, configuration_id: str) -> Response:
        body = check_body(request.data, allowed=("name",))
        copy = services.configuration_duplicate(
            **named(request, project_id, configuration_id),
            name=body.get("name", UNSET),
        )
        return Response(render_configuration(copy), status=201)


class ConfigurationActivateView(APIView):
    @operation(
        "configuration_activate",
        parameters=[CONFIGURATION_ID],
        request=None,
        responses={200: ONE},
    )
    def post(self, request: Request, project_id: Any, configuration_id: str) -> Response:
        check_body(request.data, allowed=())
        active = services.configuration_activate(**named(request, project_id, configuration_id))
        return Response(render_configuration(active))
