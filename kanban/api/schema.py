"""Small helpers for describing requests in the OpenAPI schema: closed JSON bodies, and the
bounds, lengths and patterns the server checks, stated as schema (not prose) from the same
constants and regular expressions the checks use."""

from __future__ import annotations

import re
from typing import Any, Final

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
    :func:`path_parameters`), and a request body whose JSON object has required fields (or
    needs one of several) is itself required (the server answers invalid_argument without one)."""
    by_name = path_parameters()
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "path" and parameter.get("name") in by_name:
                    parameter["schema"] = by_name[parameter["name"]]
            body: dict[str, Any] = operation.get("requestBody") or {}
            for media in body.get("content", {}).values():
                schema = media.get("schema", {})
                if schema.get("required") or schema.get("anyOf"):
                    body["required"] = True
    return result
