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
        if scope["type"] == "websocket":
            headers = dict(scope.get("headers") or [])
            origin = headers.get(b"origin", b"").decode("latin-1") or None
            host = headers.get(b"host", b"").decode("latin-1") or None
            if not origin_allowed(origin, host):
                await send({"type": "websocket.close", "code": frames.CLOSE_FORBIDDEN})
                return None
        return await self.app(scope, receive, send)
