"""Small helpers for describing requests and answers in the OpenAPI schema: each module's
operations with the error answers every endpoint may give, closed JSON bodies, and the
bounds, lengths and patterns the server checks, stated as schema (not prose) from the same
constants and regular expressions the checks use."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, Protocol, TypeVar

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema

from storage import limits
from storage.addresses import PLAIN_TEXT

#: Text the server keeps or looks up refuses NUL (PostgreSQL text cannot hold it).
NO_NUL: Final = "^[^\\u0000]*$"
#: Text with something in it and no control characters (``storage.addresses``).
PLAIN: Final = PLAIN_TEXT.pattern


#: A revision this server issued (``storage.kv.parse_revision``): a positive whole number.
REVISION: Final = {
    "type": "string",
    "pattern": "^0*[1-9][0-9]*$",
    "maxLength": limits.MAX_REVISION_CHARS,
    "description": "a revision this server issued",
}

#: What any endpoint may answer besides its own answers (``kanban.api.errors`` renders them).
ERRORS: Final = {
    400: OpenApiResponse(description="invalid_argument"),
    401: OpenApiResponse(description="unauthenticated"),
    403: OpenApiResponse(description="forbidden"),
    404: OpenApiResponse(description="not_found / unknown_alias"),
    409: OpenApiResponse(
        description="conflict (with `current`) / relationship_pending / limit_reached (the "
        "boards one person may own) / quota_exceeded (the project's storage is full)"
    ),
    413: OpenApiResponse(description="too_large"),
    429: OpenApiResponse(description="rate_limited"),
}

_Decorated = TypeVar("_Decorated", bound=Callable[..., Any])


class Operation(Protocol):
    def __call__(
        self, operation_id: str | None = None, /, *, responses: dict[Any, Any], **details: Any
    ) -> Callable[[_Decorated], _Decorated]: ...


def operations(*tags: str) -> Operation:
    """``extend_schema`` for one module's endpoints: its ``tags`` (none: drf-spectacular's
    own), and after an operation's own ``responses`` the :data:`ERRORS` every endpoint may
    answer; an error status the operation names itself says more than the shared one and
    stands in its place."""

    def operation(
        operation_id: str | None = None, /, *, responses: dict[Any, Any], **details: Any
    ) -> Callable[[_Decorated], _Decorated]:
        own = {status: answer for status, answer in responses.items() if status not in ERRORS}
        errors = {status: responses.get(status, answer) for status, answer in ERRORS.items()}
        return extend_schema(
            operation_id=operation_id,
            tags=list(tags) or None,
            responses={**own, **errors},
            **details,
        )

    return operation


def object_answer(description: str, **properties: dict[str, Any]) -> OpenApiResponse:
    """A JSON object answer that always holds each of ``properties`` (and nothing else)."""
    return OpenApiResponse(
        response={"type": "object", "properties": properties, "required": list(properties)},
        description=description,
    )


def json_body(*, required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    """A closed JSON object body (``additionalProperties: false``) for ``extend_schema``;
    a body with a required field is itself required (``requestBody.required``, set by
    :func:`mark_required_bodies`)."""
    schema: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
    }
    if required:  # OpenAPI 3.0 forbids an empty "required" list
        schema["required"] = list(required)
    return {"application/json": schema}


def text(
    *, max_length: int | None = None, min_length: int = 1, pattern: str = NO_NUL, **extra: Any
) -> dict[str, Any]:
    """A string the server checks: at least ``min_length`` characters (1 unless told, as
    the server refuses empty ones), at most ``max_length``, matching ``pattern``."""
    schema: dict[str, Any] = {"type": "string", "pattern": pattern, **extra}
    if min_length:
        schema["minLength"] = min_length
    if max_length is not None:
        schema["maxLength"] = max_length
    return schema


def whole(*, minimum: int, maximum: int | None = None, **extra: Any) -> dict[str, Any]:
    """A whole number in the range the server checks."""
    schema: dict[str, Any] = {"type": "integer", "minimum": minimum, **extra}
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def page_parameters(
    *, limit: int, default: int, cursor: str, first: int, last: int
) -> list[OpenApiParameter]:
    """The query of a list that answers a page at a time: ``limit`` (1 to ``limit``,
    ``default`` when absent) and the list's ``cursor`` parameter (``first`` to ``last``), which
    takes the cursor the page before answered."""
    return [
        OpenApiParameter(
            "limit", whole(minimum=1, maximum=limit), description=f"{default} by default"
        ),
        OpenApiParameter(
            cursor,
            whole(minimum=first, maximum=last),
            description="the cursor of the page before",
        ),
    ]


def anchored(regex: re.Pattern[str] | str) -> str:
    """The pattern of a regular expression the server uses with ``fullmatch``, anchored as
    JSON Schema's (unanchored) ``pattern`` needs."""
    source = regex.pattern if isinstance(regex, re.Pattern) else regex
    return f"^(?:{source.removeprefix('^').removesuffix('$')})$"


def path_parameters() -> dict[str, dict[str, Any]]:
    """What each path parameter the URLs name (``<str:alias>`` and the like) may be, by
    name: the patterns and lengths the server checks them with."""
    from kanban.access.relationships import ALIAS_PATTERN
    from kanban.data.attachments import ATTACHMENT_ID
    from kanban.data.board import layout
    from kanban.projects.packages import ENTRYPOINT_ID_RE
    from storage.namespaces import MAX_CONVERSATION_ID_LENGTH

    return {
        "alias": text(pattern=anchored(ALIAS_PATTERN)),
        "entrypoint_id": text(pattern=anchored(ENTRYPOINT_ID_RE)),
        "attachment_id": text(pattern=anchored(ATTACHMENT_ID)),
        "conversation_id": text(max_length=MAX_CONVERSATION_ID_LENGTH),
        "card": text(pattern=anchored(layout.ID)),
        "configuration_id": text(),
        # Rows' ids: what the database's bigint holds (the services refuse 0 and more).
        "invite_id": whole(minimum=1, maximum=2**63 - 1),
        "offer_id": whole(minimum=1, maximum=2**63 - 1),
    }


def strict_schema(result: dict[str, Any], **_: Any) -> dict[str, Any]:
    """drf-spectacular post-processing hook: the path parameters' patterns (one table,
    :func:`path_parameters`); a request body whose JSON object has required fields (or
    needs one of several) is itself required (the server answers invalid_argument without one);
    and 413 only where the request carries something that can be too large."""
    by_name = path_parameters()
    for by_method in result.get("paths", {}).values():
        for operation in by_method.values():
            if not isinstance(operation, dict):
                continue
            parameters = operation.get("parameters", [])
            for parameter in parameters:
                if parameter.get("in") == "path" and parameter.get("name") in by_name:
                    parameter["schema"] = by_name[parameter["name"]]
            body: dict[str, Any] = operation.get("requestBody") or {}
            for media in body.get("content", {}).values():
                schema = media.get("schema", {})
                if schema.get("required") or schema.get("anyOf"):
                    body["required"] = True
            if not body and not any(p.get("in") == "query" for p in parameters):
                # Its path names rows by bounded ids: nothing in it can be too large.
                operation.get("responses", {}).pop("413", None)
    return result
