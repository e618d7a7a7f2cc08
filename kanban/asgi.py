"""ASGI entry point: HTTP to Django (``/mcp`` and ``/mcp/`` to the MCP SDK), websockets
through origin and auth checks."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kanban.settings")
# Django must be set up before anything imports models (the routing does).
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.urls import path, re_path  # noqa: E402

from kanban.bridge.auth import SessionAuthMiddleware  # noqa: E402
from kanban.bridge.origin import SameOriginWebsocketValidator  # noqa: E402
from kanban.mcp.server import mcp_endpoint  # noqa: E402
from kanban.routing import websocket_urlpatterns  # noqa: E402
from kanban.web.bodylimit import RequestBodyLimit  # noqa: E402
from kanban.web.security import NotOnPluginHost  # noqa: E402

# Channels routes ASGI apps with Django's path(), whose stubs expect views.
http_routes = [
    # The plugin host serves no app route; Django's middleware says so for the rest.
    # Both spellings: the MCP inspector and most clients' examples post to /mcp, and a
    # redirect would not do (clients do not replay a POST's body across one).
    path("mcp", NotOnPluginHost(mcp_endpoint)),  # type: ignore[arg-type]
    path("mcp/", NotOnPluginHost(mcp_endpoint)),  # type: ignore[arg-type]
    re_path(r"", django_asgi_app),  # type: ignore[arg-type]
]

application = ProtocolTypeRouter(
    {
        # /mcp is the MCP SDK's own ASGI app (behind its checks); the rest is Django.
        "http": RequestBodyLimit(URLRouter(http_routes)),
        # Host must be allowed AND the Origin must be exactly the page's own origin.
        "websocket": AllowedHostsOriginValidator(
            SameOriginWebsocketValidator(SessionAuthMiddleware(URLRouter(websocket_urlpatterns)))
        ),
    }
)
