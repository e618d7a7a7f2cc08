"""Small helpers for describing request bodies in the OpenAPI schema."""

from __future__ import annotations

from typing import Any


def json_body(*, required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    """A closed JSON object body (``additionalProperties: false``) for ``extend_schema``."""
    schema: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
    }
    if required:  # OpenAPI 3.0 forbids an empty "required" list
        schema["required"] = list(required)
    return {"application/json": schema}
