"""Every operation of the OpenAPI schema carries examples (its path parameters, its request
body, its success answers), and each example is valid against the schema it illustrates:
schemathesis sends the request ones as they are."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from kanban.api import examples
from kanban.api.examples import is_binary
from tests.api.test_schema_strictness import the_schema

METHODS = ("get", "put", "post", "patch", "delete")


def operations(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, by_method in schema["paths"].items():
        for method, operation in by_method.items():
            if method in METHODS:
                yield f"{method.upper()} {path}", operation


def as_json_schema(node: Any) -> Any:
    """OpenAPI 3.0's ``nullable`` as JSON Schema says it, so jsonschema can check it."""
    if isinstance(node, list):
        return [as_json_schema(each) for each in node]
    if not isinstance(node, dict):
        return node
    converted = {key: as_json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable"):
        return {"anyOf": [{"type": "null"}, converted]}
    return converted


def check(example: Any, schema: dict[str, Any], components: dict[str, Any], where: str) -> None:
    document = {**as_json_schema(schema), "components": {"schemas": as_json_schema(components)}}
    validator = jsonschema.Draft202012Validator(
        document, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    problems = [error.message for error in validator.iter_errors(example)]
    assert not problems, f"{where}: {problems}"


@pytest.fixture
def schema(db: None) -> dict[str, Any]:
    return the_schema()


def test_every_operation_has_examples(schema: dict[str, Any]) -> None:
    missing: list[str] = []
    counts = {"operations": 0, "request": 0, "response": 0}
    for name, operation in operations(schema):
        counts["operations"] += 1
        found = 0
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "path":
                if "example" not in parameter:
                    missing.append(f"{name}: path parameter {parameter['name']}")
                found += 1
        for media_type, media in (operation.get("requestBody") or {}).get("content", {}).items():
            if is_binary(media):
                continue
            if "example" not in media:
                missing.append(f"{name}: request {media_type}")
            counts["request"] += 1
            found += 1
        for status, response in operation["responses"].items():
            for media_type, media in response.get("content", {}).items():
                if not status.startswith("2") or is_binary(media):
                    continue
                if "example" not in media:
                    missing.append(f"{name}: {status} {media_type}")
                counts["response"] += 1
                found += 1
        if not found:
            missing.append(f"{name}: no example at all")
    assert not missing, "\n".join(missing)
    # 27 request bodies, one of them bytes (a board archive); the 7 operations without a
    # JSON success answer (204s, downloads, the entrypoint runs' 422) show their path.
    assert counts["operations"] == 75
    assert (counts["request"], counts["response"]) == (26, 68), counts


def test_every_example_is_valid_for_its_own_schema(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    for name, operation in operations(schema):
        for parameter in operation.get("parameters", []):
            if "example" in parameter:
                where = f"{name} {parameter['name']}"
                check(parameter["example"], parameter["schema"], components, where)
        for media_type, media in (operation.get("requestBody") or {}).get("content", {}).items():
            if "example" in media:
                check(media["example"], media["schema"], components, f"{name} {media_type}")
        for status, response in operation["responses"].items():
            for media_type, media in response.get("content", {}).items():
                if "example" in media:
                    where = f"{name} {status} {media_type}"
                    check(media["example"], media["schema"], components, where)


def test_no_example_in_the_tables_is_left_unused(schema: dict[str, Any]) -> None:
    """A renamed operation or component would otherwise drop its example silently."""
    names = {operation["operationId"] for _, operation in operations(schema)}
    assert set(examples.REQUESTS) <= names
    assert set(examples.RESPONSES) <= names
    assert set(examples.COMPONENTS) <= set(schema["components"]["schemas"])


def test_a_bad_example_is_caught() -> None:
    """The check itself refuses what the schema forbids (a null where none is allowed, a
    missing required field, a string that is no UUID)."""
    components = {"Board": {"type": "object", "required": ["id"], "properties": {}}}
    uuid = {"type": "string", "format": "uuid"}
    with pytest.raises(AssertionError):
        check(None, {"type": "string"}, components, "null")
    with pytest.raises(AssertionError):
        check({}, {"$ref": "#/components/schemas/Board"}, components, "required")
    with pytest.raises(AssertionError):
        check("not-a-uuid", uuid, components, "format")
    check(None, {"type": "string", "nullable": True}, components, "nullable")
