"""Websocket Origin check, stricter than Channels' host-only validator.

A browser sends the session cookie with a websocket handshake from ANY page on the same host,
whatever its port or scheme, so the Origin must equal the origin the browser used to reach us
(scheme-less host and port, from the Host header) or be listed in CSRF_TRUSTED_ORIGINS.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from kanban.bridge import frames

DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_allowed(origin: str | None, host_header: str | None) -> bool:
    """True when ``origin`` names the host and port the browser reached us at.

    The Host header carries no scheme; a missing port means the default port of the page's
    scheme (so ``https://kanban.example.com`` matches ``Host: kanban.example.com`` behind a
    TLS-terminating proxy, while ``http://kanban.example.com:3000`` does not).
    """
    if not origin or not host_header:
        return False
    try:
        page = urlsplit(origin)
        page_port = page.port
        served = urlsplit(f"//{host_header}")
        served_port = served.port
    except ValueError:
        return False
    if page.scheme not in DEFAULT_PORTS or not page.hostname or not served.hostname:
        return False
    trusted = {o.lower().rstrip("/") for o in settings.CSRF_TRUSTED_ORIGINS}
    if f"{page.scheme}://{page.netloc.lower()}" in trusted:
        return True
    default = DEFAULT_PORTS[page.scheme]
    return (page.hostname.lower(), page_port or default) == (
        served.hostname.lower(),
        served_port or default,
    )


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
