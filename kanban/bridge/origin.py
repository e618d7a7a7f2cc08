"""Websocket Origin check, stricter than Channels' host-only validator: the one same-origin
rule (``kanban.access.origins``) before any consumer runs."""

from __future__ import annotations

from typing import Any

from kanban.access.origins import origin_allowed
from kanban.bridge import frames


class SameOriginWebsocketValidator:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        # No locals: this frame lives as long as the socket.
        if scope["type"] == "websocket" and not _same_origin(scope.get("headers") or []):
            await send({"type": "websocket.close", "code": frames.CLOSE_FORBIDDEN})
            return None
        return await self.app(scope, receive, send)


def _same_origin(headers: list[tuple[bytes, bytes]]) -> bool:
    named = dict(headers)
    origin = named.get(b"origin", b"").decode("latin-1") or None
    return origin_allowed(origin, named.get(b"host", b"").decode("latin-1") or None)
