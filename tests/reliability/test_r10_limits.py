"""R10: input limits at the exact boundary, with one error shape on HTTP and websocket:
key length, value size, depth, NaN/Infinity, unpaired surrogates, oversized frames and
bodies without Content-Length."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from channels.testing import WebsocketCommunicator

from kanban.accounts.tokens import token_create
from kanban.asgi import application
from kanban.data.request_size import max_request_bytes
from tests.api.conftest import People, client_for
from tests.kanban.bridge.helpers import (
    CONNECT_TIMEOUT,
    HOST,
    ORIGIN,
    opening_context,
    session_cookie,
)
from tests.live import LiveServer

pytestmark = pytest.mark.django_db(transaction=True)
LIMIT = 4096


def deep(n: int) -> str:
    return "[" * n + "]" * n


#: (name, key, value JSON text, expected code or None for accepted)
CASES = [
    ("key 1024", "k" * 1024, "1", None),
    ("key 1025", "k" * 1025, "1", "invalid_argument"),
    ("value at limit", "v", json.dumps("x" * (LIMIT - 2)), None),
    ("value one byte over", "v", json.dumps("x" * (LIMIT - 1)), "too_large"),
    ("depth 64", "d", deep(64), None),
    ("depth 65", "d", deep(65), "invalid_argument"),
    ("NaN", "n", "NaN", "invalid_argument"),
    ("Infinity", "n", "-Infinity", "invalid_argument"),
    ("unpaired surrogate in value", "s", '"\\ud800"', "invalid_argument"),
    ("unpaired surrogate in key", "\udc00", "1", "invalid_argument"),
    ("paired surrogates", "s", '"\\ud834\\udd1e"', None),
]


@pytest.fixture(autouse=True)
def small_limit(settings: Any) -> None:
    settings.KANBAN_MAX_VALUE_BYTES = settings.KANBAN_MAX_DOCUMENT_BYTES = LIMIT


def http_put(client: Any, board: Any, key: str, value_text: str) -> tuple[str | None, Any]:
    response = client.put(
        f"/api/v1/projects/{board.id}/kv/{quote(key, safe='')}",
        data='{"value": ' + value_text + "}",
        content_type="application/json",
    )
    body = response.json()
    return (None if response.status_code == 200 else body["code"]), body


async def ws_put(communicator: WebsocketCommunicator, n: int, key: str, value_text: str) -> Any:
    key_text = json.dumps(key) if "\udc00" not in key else '"\\udc00"'
    await communicator.send_to(
        text_data=f'{{"v":1,"id":{n},"op":"set","key":{key_text},"value":{value_text}}}'
    )
    reply = json.loads(await communicator.receive_from(timeout=5))
    return (None if reply["ok"] else reply["error"]["code"]), reply


async def test_http_and_websocket_accept_and_refuse_exactly_the_same_inputs(
    people: People, board: Any
) -> None:
    from channels.db import database_sync_to_async

    rest = await database_sync_to_async(client_for)(people.bob)
    cookie = await database_sync_to_async(session_cookie)(people.bob)
    communicator = WebsocketCommunicator(
        application, f"/ws/boards/{board.id}/", [ORIGIN, HOST, (b"cookie", cookie)]
    )
    assert (await communicator.connect(timeout=CONNECT_TIMEOUT))[0]
    await opening_context(communicator)
    rows = []
    try:
        for n, (name, key, value_text, expected) in enumerate(CASES, start=1):
            ws_code, ws_reply = await ws_put(communicator, n, key, value_text)
            assert ws_code == expected, (name, ws_reply)
            if "\udc00" in key:
                # A URL path is UTF-8: a lone surrogate cannot even be spelled in a REST key.
                rows.append((name, "n/a", ws_code))
                continue
            http_code, http_body = await database_sync_to_async(http_put)(
                rest, board, key, value_text
            )
            rows.append((name, http_code, ws_code))
            assert http_code == expected, (name, http_body)
            if expected is not None:
                error = ws_reply["error"]
                assert set(http_body) >= {"code", "message"} and set(error) >= {"code", "message"}
                assert error["code"] == http_body["code"]
        big = "x" * max_request_bytes()
        await communicator.send_to(text_data=f'{{"v":1,"id":99,"op":"get","key":"{big}"}}')
        oversized = json.loads(await communicator.receive_from(timeout=5))
        assert oversized["error"]["code"] == "too_large"
    finally:
        await communicator.disconnect()
    print("\nR10:", "; ".join(f"{n}: http={h or 'ok'} ws={w or 'ok'}" for n, h, w in rows))


def test_a_body_without_content_length_is_bounded(
    live_server: LiveServer, people: People, board: Any
) -> None:
    _, token = token_create(user=people.bob)
    parts = urlsplit(live_server.url)

    def chunked_put(total: int) -> tuple[int, Any]:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        body = ('{"value": "' + "x" * total + '"}').encode()

        def chunks() -> Any:
            for start in range(0, len(body), 8192):
                yield body[start : start + 8192]

        connection.request(
            "PUT",
            f"/api/v1/projects/{board.id}/kv/chunked",
            body=chunks(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            encode_chunked=True,
        )
        response = connection.getresponse()
        return response.status, json.loads(response.read())

    assert chunked_put(100)[0] == 200
    status, body = chunked_put(5 * 1024 * 1024)  # well over the 1 MiB default
    assert (status, body["code"]) == (413, "too_large")
