"""``/mcp/``: the Model Context Protocol over Streamable HTTP, for agents.

Stateless and JSON-only: each POST carries one JSON-RPC message and a request is answered in
the response body (``application/json``), so any worker answers any call and nothing
outlives a request. There is no server-to-client stream (GET answers 405, as the transport
allows) and no session to end. The MCP SDK's server needs an ASGI lifespan that daphne does
not run, so the handful of methods a tools-only server speaks are implemented here:
``initialize``, ``ping``, ``tools/list`` and ``tools/call``.

Every request authenticates its Bearer token again: a token names one project and is
revoked, or expires, between one call and the next.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Final
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.request import validate_host
from django.views.decorators.csrf import csrf_exempt

from kanban.accounts.tokens import token_authenticate
from kanban.mcp.tools import TOOLS, tool_call
from kanban.models import ApiToken
from storage import jsoncodec
from storage.errors import KanbanError

logger = logging.getLogger(__name__)

#: The handshake revisions this server speaks, newest first.
PROTOCOL_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26")
SERVER_INFO: Final = {"name": "kanban", "title": "Kanban boards", "version": "1.0.0"}
INSTRUCTIONS: Final = (
    "Tools over one kanban project's Knowledge documents and KV, chosen by the bearer "
    "token; pass `alias` to reach a related project. Results are JSON text."
)

# JSON-RPC error codes.
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
#: Not a JSON-RPC code of the spec: the bearer token is missing, invalid or revoked.
UNAUTHORIZED: Final = -32001


def _error(message_id: Any, code: int, message: str, status: int) -> JsonResponse:
    body = {"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": message}}
    return JsonResponse(body, status=status)


def _result(message_id: Any, result: dict[str, Any]) -> JsonResponse:
    return JsonResponse({"jsonrpc": "2.0", "id": message_id, "result": result})


def _token(request: HttpRequest) -> ApiToken | None:
    scheme, _, plaintext = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not plaintext.strip():
        return None
    return token_authenticate(plaintext=plaintext.strip())


def _origin_allowed(request: HttpRequest) -> bool:
    """Browsers send Origin; a page on another site must not drive a local agent endpoint
    (DNS rebinding). Agents that send none are let through."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    try:
        host = urlsplit(origin).hostname
    except ValueError:
        return False
    return host is not None and validate_host(host, settings.ALLOWED_HOSTS)


@csrf_exempt  # no cookie is ever read here: a bearer token or nothing
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        response = HttpResponse(status=405)
        response["Allow"] = "POST"
        return response
    if not _origin_allowed(request):
        return _error(None, INVALID_REQUEST, "this Origin may not call the endpoint", 403)
    version = request.headers.get("MCP-Protocol-Version")
    if version is not None and version not in PROTOCOL_VERSIONS:
        return _error(None, INVALID_REQUEST, f"unsupported protocol version {version!r}", 400)
    token = _token(request)
    if token is None:
        response = _error(None, UNAUTHORIZED, "a valid bearer token is needed", 401)
        response["WWW-Authenticate"] = 'Bearer realm="mcp"'
        return response
    if token.project_id is None:
        return _error(
            None,
            UNAUTHORIZED,
            "an MCP token names its project: create_token USERNAME --project ID",
            403,
        )
    try:
        message = json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        return _error(None, PARSE_ERROR, "the body is not JSON", 400)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return _error(None, INVALID_REQUEST, "one JSON-RPC 2.0 message per request", 400)
    if "method" not in message or "id" not in message:
        return HttpResponse(status=202)  # a notification or a response: nothing to answer
    return _answer(token, message)


def _answer(token: ApiToken, message: dict[str, Any]) -> HttpResponse:
    message_id, method = message["id"], message["method"]
    params = message.get("params") or {}
    if not isinstance(params, dict):
        return _error(message_id, INVALID_PARAMS, "params must be an object", 400)
    if method == "initialize":
        asked = params.get("protocolVersion")
        return _result(
            message_id,
            {
                "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": SERVER_INFO,
                "instructions": INSTRUCTIONS,
            },
        )
    if method == "ping":
        return _result(message_id, {})
    if method == "tools/list":
        return _result(message_id, {"tools": list(TOOLS)})
    if method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            return _error(message_id, INVALID_PARAMS, "tools/call needs a name and arguments", 400)
        if name not in {tool["name"] for tool in TOOLS}:
            return _error(message_id, INVALID_PARAMS, f"no tool {name!r}", 400)
        return _result(message_id, _run(token, name, arguments))
    return _error(message_id, METHOD_NOT_FOUND, f"no method {method!r}", 404)


def _run(token: ApiToken, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool's answer: its JSON result as text, or the refusal (``{code, message}``, the
    codes REST and the bridge use) as a tool error the agent can read and act on."""
    try:
        result, failed = tool_call(token=token, name=name, arguments=arguments), False
    except KanbanError as error:
        result, failed = error.as_dict(), True
    text = jsoncodec.encode(result)
    return {"content": [{"type": "text", "text": text}], "isError": failed}
