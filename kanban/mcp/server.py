"""``/mcp`` (and ``/mcp/``): the Model Context Protocol over Streamable HTTP, for agents,
served by the official SDK (``mcp``).

Stateless and JSON-only: each POST carries one JSON-RPC message answered in the response
body, so any worker answers any call and nothing outlives a request. The SDK's session
manager needs its ``run()`` entered for as long as it serves; daphne runs no ASGI lifespan,
so each worker's event loop enters one the first time it is asked (``_manager``), and keeps
it until the loop ends.

In front of the SDK, this endpoint keeps the behaviour its clients already rely on
(``McpEndpoint``): only POST (GET would hold a stream open; it answers 405), the Host and
Origin checks every other way in makes (``kanban.access.origins``), the bearer token read by
the parser REST uses, the body parsed by the project's own JSON codec, with its depth
limit and no NaN, and the message checked to be a request, notification or response whose
id is a string or an integer (``_invalid_request``). Every request authenticates its token
again: a token names one project and is revoked, or expires, between one call and the next.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any, Final
from uuid import UUID

import mcp_types as types
from channels.db import database_sync_to_async
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError

from kanban.access.origins import host_allowed, origin_allowed, request_scheme
from kanban.accounts.tokens import token_from_authorization
from kanban.mcp import resources
from kanban.mcp.tools import TOOL_NAMES, tool_result, tool_schemas
from kanban.mcp.watch import get_watcher
from kanban.models import ApiToken
from storage import jsoncodec
from storage.errors import KanbanError

SERVER_NAME: Final = "kanban"
SERVER_TITLE: Final = "Kanban boards"
SERVER_VERSION: Final = "1.0.0"
INSTRUCTIONS: Final = (
    "Tools over one kanban project's Knowledge documents, KV and Board cards, chosen by the "
    "bearer token; pass `alias` to reach a related project. Results are typed JSON (each "
    "tool's outputSchema), also given as text; a refusal is {code, message, field?}. Change "
    "a Board's cards with board_cards, which keeps the board's layout whole."
)
#: A value at its depth limit, inside a tool call's message, params and arguments.
MESSAGE_DEPTH: Final = jsoncodec.MAX_DEPTH + 3
#: Where the endpoint leaves the authenticated token for the tool handler.
TOKEN_SCOPE_KEY: Final = "kanban.mcp.token"  # noqa: S105 - a scope key, not a secret

# JSON-RPC error codes this layer answers with itself.
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
INVALID_PARAMS: Final = -32602
#: Not a JSON-RPC code of the spec: the bearer token is missing, invalid or revoked.
UNAUTHORIZED: Final = -32001


async def _list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    # Every tool fits one page, which gives no cursor; the spec's pagination page says an
    # invalid cursor SHOULD be -32602, never silently the first page again.
    _one_page(params, "tools/list")
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=tool["name"],
                title=tool["title"],
                description=tool["description"],
                input_schema=tool["inputSchema"],
                output_schema=tool["outputSchema"],
            )
            for tool in tool_schemas()
        ]
    )


async def _call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name not in TOOL_NAMES:
        raise MCPError(INVALID_PARAMS, f"no tool {params.name!r}")
    token: ApiToken = ctx.request.scope[TOKEN_SCOPE_KEY]
    failed, value = await database_sync_to_async(tool_result)(
        token=token, name=params.name, arguments=params.arguments or {}
    )
    # The value typed (what the tool's outputSchema declares) and as JSON text beside it,
    # for clients older than typed results; a refusal is text only, which no client checks
    # against the schema.
    return types.CallToolResult(
        content=[types.TextContent(text=jsoncodec.encode(value))],
        structured_content=None if failed else value,
        is_error=failed,
    )


def _one_page(params: types.PaginatedRequestParams | None, what: str) -> None:
    if params is not None and params.cursor is not None:
        raise MCPError(INVALID_PARAMS, f"{what} has one page and gave no cursor")


async def _list_resources(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    _one_page(params, "resources/list")
    token: ApiToken = ctx.request.scope[TOKEN_SCOPE_KEY]
    listed = await database_sync_to_async(resources.resources_list)(token=token)
    return types.ListResourcesResult(
        resources=[types.Resource.model_validate(resource) for resource in listed]
    )


async def _list_resource_templates(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    _one_page(params, "resources/templates/list")
    return types.ListResourceTemplatesResult(
        resource_templates=[types.ResourceTemplate.model_validate(t) for t in resources.TEMPLATES]
    )


async def _read_resource(
    ctx: Any, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    token: ApiToken = ctx.request.scope[TOKEN_SCOPE_KEY]
    uri = str(params.uri)
    try:
        text = await database_sync_to_async(resources.resource_read)(token=token, uri=uri)
    except resources.ResourceNotFound as missing:
        raise MCPError(resources.RESOURCE_NOT_FOUND, str(missing), {"uri": uri}) from None
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=resources.MIME, text=text)]
    )


async def _watched(ctx: Any, uri: str) -> tuple[ApiToken, UUID]:
    """The token and the board of a (un)subscription; refused without a session (nothing
    would carry a notification) or for a board the token may not read."""
    if not ctx.request.headers.get("mcp-session-id"):
        message = "subscriptions need a session: initialize and send its Mcp-Session-Id"
        raise MCPError(INVALID_REQUEST, message)
    token: ApiToken = ctx.request.scope[TOKEN_SCOPE_KEY]
    try:
        board, _ = await database_sync_to_async(resources.check_readable)(token=token, uri=uri)
    except resources.ResourceNotFound as missing:
        raise MCPError(resources.RESOURCE_NOT_FOUND, str(missing), {"uri": uri}) from None
    return token, board


async def _subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
    uri = str(params.uri)
    token, board = await _watched(ctx, uri)
    await get_watcher().subscribe(
        session_id=ctx.request.headers["mcp-session-id"],
        session=ctx.session,
        token=token,
        board=board,
        uri=uri,
    )
    return types.EmptyResult()


async def _unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    uri = str(params.uri)
    parsed = resources.parse_uri(uri)
    if not ctx.request.headers.get("mcp-session-id") or parsed is None:
        return types.EmptyResult()  # nothing was subscribed: nothing to stop
    await get_watcher().unsubscribe(
        session_id=ctx.request.headers["mcp-session-id"], board=parsed[0], uri=uri
    )
    return types.EmptyResult()


def build_server() -> Server[Any]:
    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        title=SERVER_TITLE,
        instructions=INSTRUCTIONS,
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
        on_list_resources=_list_resources,
        on_list_resource_templates=_list_resource_templates,
        on_read_resource=_read_resource,
        on_subscribe_resource=_subscribe,
        on_unsubscribe_resource=_unsubscribe,
    )


class _Running:
    """One worker loop's two session managers, entered by a task that lives as long as the
    loop: the stateless one answers any request of no session on any worker; the stateful
    one holds the sessions an initialize opens, for resource subscriptions."""

    def __init__(self) -> None:
        self.stateless = _manager_of(stateless=True)
        self.stateful = _manager_of(stateless=False)
        #: A session's id -> the token that opened it: no other token may use it.
        self.owners: dict[str, int] = {}
        self.started = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        async with self.stateless.run(), self.stateful.run():
            self.started.set()
            await asyncio.Event().wait()

    def forget_ended(self) -> None:
        live = self.stateful._server_instances
        for session_id in [s for s in self.owners if s not in live]:
            del self.owners[session_id]


def _manager_of(*, stateless: bool) -> StreamableHTTPSessionManager:
    return StreamableHTTPSessionManager(
        app=build_server(),
        json_response=True,
        stateless=stateless,
        # Host and Origin are checked in front (McpEndpoint) by the rule every other way
        # in follows: the SDK's patterns can express neither ALLOWED_HOSTS' ".example.com"
        # and "*" nor a whole-origin comparison.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


_running: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Running] = (
    weakref.WeakKeyDictionary()
)


async def _managers() -> _Running:
    loop = asyncio.get_running_loop()
    running = _running.get(loop)
    if running is None or running.task.done():
        running = _running[loop] = _Running()
    await running.started.wait()
    return running


def _authenticate(header: bytes) -> ApiToken | None:
    return token_from_authorization(header) if header else None


class McpEndpoint:
    """The ASGI app mounted at ``/mcp`` and ``/mcp/``: checks, then the SDK."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = {k.lower(): v for k, v in scope.get("headers") or []}
        host = headers.get(b"host", b"").decode("latin-1")
        origin = headers.get(b"origin", b"").decode("latin-1") or None
        if not host_allowed(host):
            return await _answer(send, 421, _error(INVALID_REQUEST, "this Host is not served"))
        session_id = headers.get(b"mcp-session-id", b"").decode("latin-1") or None
        method = scope["method"]
        # GET (the session's stream of notifications) and DELETE (its end) name a session;
        # without one there is nothing to stream or end.
        if method != "POST" and not (method in ("GET", "DELETE") and session_id):
            allow = b"POST" if session_id is None else b"GET, POST, DELETE"
            return await _answer(send, 405, None, [(b"allow", allow)])
        if origin is not None and not origin_allowed(origin, host, scheme=request_scheme(scope)):
            message = "this Origin may not call the endpoint"
            return await _answer(send, 403, _error(INVALID_REQUEST, message))
        try:
            token = await database_sync_to_async(_authenticate)(headers.get(b"authorization", b""))
        except KanbanError:
            token = None
        if token is None:
            message = "a valid bearer token is needed"
            # No resource_metadata: tokens come from create_token, and no OAuth authorization
            # server or RFC 9728 metadata document stands behind them to point a client at.
            challenge = [(b"www-authenticate", b'Bearer realm="mcp"')]
            return await _answer(send, 401, _error(UNAUTHORIZED, message), challenge)
        if token.project_id is None:
            message = "an MCP token names its project: create_token USERNAME --project ID"
            return await _answer(send, 403, _error(UNAUTHORIZED, message))
        running = await _managers()
        if session_id is not None:
            running.forget_ended()
            if running.owners.get(session_id) != token.pk:
                # Unknown here (ended, or made on another worker), or another token's: the
                # spec's answer to a session the server does not have, which makes a
                # client start a new one.
                return await _answer(send, 404, _error(INVALID_REQUEST, "no such session"))
            if method != "POST":
                return await running.stateful.handle_request(
                    {**scope, TOKEN_SCOPE_KEY: token}, receive, send
                )
        body = await _read_body(receive)
        try:
            message_object = jsoncodec.decode(body.decode("utf-8"))
            jsoncodec.check_json(message_object, max_depth=MESSAGE_DEPTH)
        except (KanbanError, UnicodeDecodeError):
            return await _answer(send, 400, _error(PARSE_ERROR, "the body is not JSON"))
        if not isinstance(message_object, dict) or message_object.get("jsonrpc") != "2.0":
            message = "one JSON-RPC 2.0 message per request"
            return await _answer(send, 400, _error(INVALID_REQUEST, message))
        problem = _invalid_request(message_object)
        if problem is not None:
            usable_id = message_object.get("id")
            answer = _error(INVALID_REQUEST, problem, usable_id if _is_id(usable_id) else None)
            return await _answer(send, 400, answer)
        request_scope = {**scope, TOKEN_SCOPE_KEY: token}
        if session_id is not None:
            await running.stateful.handle_request(request_scope, _replay(body, receive), send)
        elif message_object.get("method") == "initialize":
            # A client that initializes gets a session (Mcp-Session-Id), which it may keep
            # to subscribe to resources; one that does not send it back stays stateless.
            running.forget_ended()
            await running.stateful.handle_request(
                request_scope, _replay(body, receive), _owned_by(token, running, send)
            )
        else:
            await running.stateless.handle_request(request_scope, _replay(body, receive), send)


def _owned_by(token: ApiToken, running: _Running, send: Any) -> Any:
    """A ``send`` that records the session an initialize opened as this token's."""

    async def recording(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            for name, value in message.get("headers") or []:
                if name.lower() == b"mcp-session-id":
                    running.owners[value.decode("latin-1")] = token.pk
        await send(message)

    return recording


def _is_id(value: object) -> bool:
    # JSON-RPC allows null ids but MCP does not, and a boolean is no integer here.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _invalid_request(message: dict[str, Any]) -> str | None:
    """Why the message is no JSON-RPC request, notification or response MCP accepts; None
    when it is one. Decided here because the SDK takes a bad id for a notification (202,
    no answer) and a missing method for bad params, with its validator's dump."""
    if "id" in message and not _is_id(message["id"]):
        return "id must be a string or an integer"
    if "method" in message:
        return None if isinstance(message["method"], str) else "method must be a string"
    if "id" in message and ("result" in message or "error" in message):
        return None  # a response to a request of the server's: the SDK accepts it
    return "a request names its method"


def _error(code: int, message: str, request_id: str | int | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


async def _answer(
    send: Any,
    status: int,
    body: dict[str, Any] | None,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    content = b"" if body is None else jsoncodec.encode(body).encode()
    extra = [(b"content-type", b"application/json")] if body is not None else []
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*extra, (b"content-length", str(len(content)).encode()), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": content})


async def _read_body(receive: Any) -> bytes:
    """The whole body (``RequestBodyLimit`` in front of this app bounds it)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Any) -> Any:
    """A ``receive`` that hands the SDK the body this app already read, then the server's
    own (which reports the disconnect)."""
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        message: dict[str, Any] = await receive()
        return message

    return replay


mcp_endpoint = McpEndpoint()
