"""R13: a Knowledge document, and a KV value, at exactly its size limit, in the worst JSON
encoding a client may choose, is accepted over REST and over the bridge by a real daphne
worker; one byte more is refused with ``too_large`` and writes nothing.

The limit is 8 MiB of markdown (UTF-8). Its worst encoding is a control character: one byte
of UTF-8, six of JSON (``\\u0001``) in every encoder. The title is at its longest too, in
characters that an ASCII-only encoder (Python's default) writes as twelve bytes each. Every
cap in front of the document (ASGI body limit, parser, websocket frame, daphne's message
size) is derived from the limit in ``storage/limits.py``; before that, an 8 MiB document
with newlines and quotes was refused at 8.45 MB of body, and daphne closed the socket
(1006) on a value at exactly its 1 MiB limit.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from websockets.sync.client import connect

from kanban.accounts.tokens import token_create
from kanban.models import Project
from storage import limits
from storage.knowledge import knowledge_list
from tests.factories import a_project, a_user
from tests.kanban.bridge.helpers import session_cookie
from tests.live import LiveServer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LIMIT = limits.DEFAULT_DOCUMENT_BYTES
TITLE = "\U0001f4d8" * limits.MAX_TITLE_CHARS


VALUE_LIMIT = limits.DEFAULT_VALUE_BYTES


def value(json_bytes: int) -> str:
    """A string of exactly ``json_bytes`` of compact UTF-8 JSON, in two-byte characters
    that an ASCII-only encoder writes as six."""
    return "\u00e9" * ((json_bytes - 2) // 2) + "x" * ((json_bytes - 2) % 2)


def document(markdown_bytes: int) -> dict[str, str]:
    return {"title": TITLE, "markdown": "\x01" * markdown_bytes}


@pytest.fixture
def world(live_servers: Callable[..., list[LiveServer]]) -> dict[str, Any]:
    bob = a_user("bob")
    board = a_project(name="Wiki", members={bob: "developer"})
    (server,) = live_servers(1)
    return {"server": server, "bob": bob, "board": board, "token": token_create(user=bob)[1]}


def documents_in(board: Project) -> int:
    return len(knowledge_list(project_id=board.id).documents)


def send(world: dict[str, Any], path: str, body: bytes, method: str) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{world['server'].url}/api/v1/projects/{world['board'].id}/{path}",
        data=body,
        method=method,
        headers={"Authorization": f"Bearer {world['token']}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_a_document_at_its_limit_is_accepted_over_rest_and_one_byte_more_is_too_large(
    world: dict[str, Any],
) -> None:
    at_limit = json.dumps(document(LIMIT)).encode()
    assert len(at_limit) > 6 * LIMIT, "the body is the worst case: six bytes per byte"

    status, created = send(world, "knowledge/documents/", at_limit, "POST")
    assert status == 201, created
    assert created["size"] == LIMIT

    larger = json.dumps(document(LIMIT + 1)).encode()
    status, refused = send(world, "knowledge/documents/", larger, "POST")
    assert (status, refused["code"]) == (413, "too_large"), refused
    assert documents_in(world["board"]) == 1


def bridge(world: dict[str, Any], *frames: dict[str, Any]) -> list[dict[str, Any]]:
    """Send the frames as ASCII-only JSON over one real socket; the replies, in order."""
    server = world["server"]
    with connect(
        f"{server.ws_url}/ws/boards/{world['board'].id}/",
        additional_headers=[("Cookie", session_cookie(world["bob"]).decode())],
        origin=server.url,  # type: ignore[arg-type]
        open_timeout=10,
        max_size=None,
    ) as ws:
        assert json.loads(ws.recv(timeout=10))["event"] == "context"
        for request_id, frame in enumerate(frames, 1):
            ws.send(json.dumps({"v": 1, "id": request_id, **frame}))
        return [json.loads(ws.recv(timeout=120)) for _ in frames]


def test_a_document_at_its_limit_is_accepted_over_the_bridge_and_one_byte_more_is_too_large(
    world: dict[str, Any],
) -> None:
    created, refused = bridge(
        world,
        {"op": "knowledge.create", "value": document(LIMIT)},
        {"op": "knowledge.create", "value": document(LIMIT + 1)},
    )

    assert created["ok"] is True, created
    assert created["result"]["size"] == LIMIT
    assert refused["ok"] is False and refused["error"]["code"] == "too_large", refused
    assert documents_in(world["board"]) == 1


def test_a_value_at_its_limit_is_accepted_over_rest_and_the_bridge_and_one_byte_more_is_not(
    world: dict[str, Any],
) -> None:
    at_limit, larger = value(VALUE_LIMIT), value(VALUE_LIMIT + 1)
    assert len(json.dumps(at_limit, ensure_ascii=False).encode()) == VALUE_LIMIT

    for key, text, expected in (("rest", at_limit, 200), ("rest", larger, 413)):
        body = json.dumps({"value": text}).encode()
        status, reply = send(world, f"kv/{key}", body, "PUT")
        assert status == expected, reply
    stored, refused = bridge(
        world,
        {"op": "set", "key": "bridge", "value": at_limit},
        {"op": "set", "key": "bridge", "value": larger},
    )
    assert stored["ok"] is True, stored
    assert refused["ok"] is False and refused["error"]["code"] == "too_large", refused
    got, missing = bridge(world, {"op": "get", "key": "bridge"}, {"op": "get", "key": "none"})
    assert got["result"]["value"] == at_limit and missing["result"] == {"found": False}
