"""The protocol spec (bridge_js/protocol.json) is the one source of the limits and codes,
and every cap in front of a limit leaves room for the limit in its worst encoding."""

from __future__ import annotations

import json

from storage import jsoncodec, limits
from storage.errors import ErrorCode
from storage.knowledge_rules import MAX_TITLE_LENGTH
from storage.namespaces import MAX_USER_KEY_LENGTH


def test_the_error_codes_are_the_specs() -> None:
    assert [str(code) for code in ErrorCode] == limits.SPEC["errors"]


def test_storage_enforces_the_specs_limits() -> None:
    spec = limits.SPEC["limits"]
    assert spec["keyChars"] == MAX_USER_KEY_LENGTH
    assert spec["depth"] == jsoncodec.MAX_DEPTH
    assert spec["titleChars"] == MAX_TITLE_LENGTH


def test_a_value_at_its_limit_fits_its_cap_in_any_compact_encoding() -> None:
    limit = 1000
    text = "\u00e9" * ((limit - 2) // 2)  # compact UTF-8 JSON: exactly the limit
    assert len(json.dumps(text, ensure_ascii=False).encode()) == limit
    worst = len(json.dumps({"value": text, "expectedRevision": "1" * 20}).encode())
    assert worst <= limits.value_json_bytes(limit)


def test_a_document_at_its_limit_fits_its_cap_in_any_compact_encoding() -> None:
    limit = 1000
    body = {"title": "\U0001f4d8" * limits.MAX_TITLE_CHARS, "markdown": "\x01" * limit}
    assert len(json.dumps(body).encode()) <= limits.document_json_bytes(limit)
    assert limits.request_bytes(value_bytes=limit, document_bytes=limit) == max(
        limits.value_json_bytes(limit), limits.document_json_bytes(limit)
    )
