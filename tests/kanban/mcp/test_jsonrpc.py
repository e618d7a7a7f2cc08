"""The MCP endpoint as a client someone else wrote meets it: at ``/mcp`` as well as
``/mcp/``, and every malformed JSON-RPC message answered with the error JSON-RPC names,
never silence or a pydantic dump. bob develops on the Board."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from tests.kanban.mcp.test_mcp import create_token, world  # noqa: F401 - the fixture
from tests.live import HOST, LiveServer

pytestmark = pytest.mark.django_db(transaction=True)

JSON_RPC = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def post(
    server: LiveServer, message: Any, *, path: str = "/mcp/", token: str | None = None
) -> tuple[int, dict[str, str], Any]:
    connection = http.client.HTTPConnection(HOST, server.port, timeout=10)
    headers = {**JSON_RPC, **({"Authorization": f"Bearer {token}"} if token else {})}
    connection.request("POST", path, body=json.dumps(message).encode(), headers=headers)
    response = connection.getresponse()
    text = response.read()
    connection.close()
    answered = {name.lower(): value for name, value in response.getheaders()}
    return response.status, answered, json.loads(text) if text else None


@pytest.fixture
def bob(world: dict[str, Any]) -> str:  # noqa: F811 - the fixture imported above
    return create_token("bob", "--project", str(world["board"].id))


def test_the_endpoint_answers_at_mcp_with_and_without_its_slash(
    bob: str, live_server: LiveServer
) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for path in ("/mcp", "/mcp/"):
        status, _, body = post(live_server, ping, path=path, token=bob)
        assert (status, body) == (200, {"jsonrpc": "2.0", "id": 1, "result": {}}), path
    listed = post(live_server, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, path="/mcp")
    assert listed[0] == 401, "the same checks guard both paths"


@pytest.mark.parametrize("bad_id", [None, {"n": 1}, [1], True, 1.5])
def test_a_request_whose_id_is_not_a_string_or_an_integer_is_an_invalid_request(
    bob: str, live_server: LiveServer, bad_id: Any
) -> None:
    status, _, body = post(
        live_server, {"jsonrpc": "2.0", "id": bad_id, "method": "ping"}, token=bob
    )
    assert status == 400
    assert body["id"] is None and body["error"]["code"] == -32600
    assert "id" in body["error"]["message"]


def test_a_message_without_a_method_is_an_invalid_request_without_a_validation_dump(
    bob: str, live_server: LiveServer
) -> None:
    for message in ({"jsonrpc": "2.0", "id": 3}, {"jsonrpc": "2.0", "id": 3, "method": 7}):
        status, _, body = post(live_server, message, token=bob)
        assert status == 400 and body["error"]["code"] == -32600, message
        assert body["id"] == 3, "a usable id is answered back"
        assert "pydantic" not in json.dumps(body) and "validation" not in json.dumps(body)


def test_a_response_from_the_client_is_still_accepted(bob: str, live_server: LiveServer) -> None:
    """A JSON-RPC response has no method: the transport accepts it (202) as before."""
    status, _, body = post(live_server, {"jsonrpc": "2.0", "id": 9, "result": {}}, token=bob)
    assert (status, body) == (202, None)


def test_tools_list_refuses_a_cursor_it_never_gave_with_invalid_params(
    bob: str, live_server: LiveServer
) -> None:
    """The MCP spec (server/utilities/pagination): invalid cursors SHOULD result in -32602.
    tools/list fits in one page, so it gives no cursor and accepts none."""
    message = {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"cursor": "x"}}
    status, _, body = post(live_server, message, token=bob)
    assert status == 200 and body["id"] == 4
    assert body["error"]["code"] == -32602 and "cursor" in body["error"]["message"]
    whole = post(live_server, {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, token=bob)[2]
    assert "nextCursor" not in whole["result"] and len(whole["result"]["tools"]) == 3


def test_every_tool_together_stays_within_an_agents_budget(
    bob: str, live_server: LiveServer
) -> None:
    """#41: tools/list under 8,000 tokens. Counted without a tokenizer: JSON schemas run near
    4 bytes a token (8,000 tokens would be 32,000 bytes), pinned here at a pessimistic 3, so
    24,000 bytes. 6,110 in December 2026, 10,601 (about 2,650 tokens at 4 bytes) once every
    tool declared its outputSchema, about 14,500 once board_cards reached the Board's parity
    (labels, history, reorders, transfers, search)."""
    listed = post(live_server, {"jsonrpc": "2.0", "id": 6, "method": "tools/list"}, token=bob)
    size = len(json.dumps(listed[2]["result"], separators=(",", ":")).encode())
    assert size < 24_000, size


def test_the_401_challenge_names_the_bearer_scheme_and_no_metadata_it_does_not_serve(
    world: dict[str, Any],  # noqa: F811 - the fixture imported above
    live_server: LiveServer,
) -> None:
    """Tokens come from create_token, not an OAuth authorization server: there is no
    protected-resource metadata document to point a client at (RFC 9728), so the challenge
    carries none rather than a link that 404s."""
    status, headers, body = post(live_server, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert status == 401 and body["error"]["code"] == -32001
    assert headers["www-authenticate"] == 'Bearer realm="mcp"'
    connection = http.client.HTTPConnection(HOST, live_server.port, timeout=10)
    connection.request("GET", "/.well-known/oauth-protected-resource")
    assert connection.getresponse().status == 404
    connection.close()


def test_tools_publish_output_schemas_and_answer_typed_json_beside_the_same_text(
    bob: str, live_server: LiveServer
) -> None:
    """#41 build item 4, on the wire: outputSchema in tools/list, structuredContent in the
    result with the same JSON as text for older clients; a refusal is text only."""
    listed = post(live_server, {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, token=bob)
    for tool in listed[2]["result"]["tools"]:
        assert tool["outputSchema"]["type"] == "object", tool["name"]
    written = tools_call(live_server, bob, "kv_store", action="set", key="k", value=[1, 2])
    assert written["isError"] is False and set(written["structuredContent"]) == {"revision"}
    assert json.loads(written["content"][0]["text"]) == written["structuredContent"]
    refused = tools_call(live_server, bob, "kv_store", action="set", key="k", valu=3)
    assert refused["isError"] is True and "structuredContent" not in refused
    assert json.loads(refused["content"][0]["text"]) == {
        "code": "invalid_argument",
        "message": "kv_store takes no 'valu'",
        "field": "valu",
    }


def tools_call(server: LiveServer, token: str, tool: str, **arguments: Any) -> Any:
    message = {
        "jsonrpc": "2.0",
        "id": 8,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    status, _, body = post(server, message, token=token)
    assert status == 200, body
    return body["result"]
