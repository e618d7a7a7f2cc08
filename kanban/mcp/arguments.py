"""The one rule for a tool call's arguments: they are checked against the tool's own
published ``inputSchema`` (JSON Schema 2020-12, by ``jsonschema``), so what ``tools/list``
promises and what a call accepts cannot differ. A bad argument is ``invalid_argument``
naming its field, before anything runs; the services check what a schema cannot say (a
date that exists, a member's name, a revision).

A null where the schema gives null no meaning is a client's way of leaving the argument
out ("every field, null for not this one"), and is left out; where the schema allows null
(a due date: none) or any JSON (a KV value), it is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from storage.errors import KanbanError, invalid_argument


class ArgumentRule:
    """One tool's arguments rule, its validator compiled once (compiling costs far more than
    validating)."""

    def __init__(self, tool: str, schema: Mapping[str, Any]) -> None:
        Draft202012Validator.check_schema(schema)
        self.tool = tool
        self.properties: Mapping[str, Any] = schema.get("properties", {})
        self.validator = Draft202012Validator(schema)

    def checked(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``arguments`` without the nulls that mean nothing, once they keep to the schema."""
        kept = {
            name: value
            for name, value in arguments.items()
            if value is not None or _null_means_something(self.properties.get(name))
        }
        error = best_match(self.validator.iter_errors(kept))
        if error is not None:
            raise _refusal(self.tool, self.properties, kept, error)
        return kept


def _null_means_something(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return True  # not a declared argument: left for the schema to refuse by name
    allowed = schema.get("type")
    return allowed is None or allowed == "null" or "null" in allowed


def _refusal(
    tool: str, properties: Mapping[str, Any], kept: Mapping[str, Any], error: ValidationError
) -> KanbanError:
    if not error.absolute_path:
        if error.validator == "additionalProperties":
            extra = sorted(set(kept) - set(properties))[0]
            return invalid_argument(f"{tool} takes no {extra!r}", field=extra)
        if error.validator == "required":
            missing = next(name for name in error.validator_value if name not in kept)
            return invalid_argument(f"{missing} is required", field=missing)
        return invalid_argument(f"{tool}'s arguments are an object")
    field = str(error.absolute_path[0])
    where = field + "".join(
        f"[{step}]" if isinstance(step, int) else f".{step}"
        for step in list(error.absolute_path)[1:]
    )
    return invalid_argument(f"{where} {_broken(error)}", field=field)


def _broken(error: ValidationError) -> str:
    """What the value breaks, in words, never repeating the value (it may be megabytes)."""
    rule, bound = error.validator, error.validator_value
    match rule:
        case "type":
            kinds = [bound] if isinstance(bound, str) else list(bound)
            named = [_A.get(kind, kind) for kind in kinds]
            return "must be " + " or ".join(named)
        case "enum":
            return "must be one of " + ", ".join(map(str, bound))
        case "minLength":
            return f"must be at least {bound} character{'s' if bound != 1 else ''}"
        case "maxLength":
            return f"must be at most {bound} characters"
        case "minimum":
            return f"must be at least {bound}"
        case "maximum":
            return f"must be at most {bound}"
        case "minItems":
            return f"must have at least {bound} items"
        case "maxItems":
            return f"must have at most {bound} items"
        case "pattern":
            return f"does not match {bound}"
        case _:
            return f"breaks its schema's {rule!r}"


_A: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "an array",
    "object": "an object",
    "null": "null",
}
