"""Content Security Policies, one builder per page type.

Plugin pages run third-party code: they get ``PLUGIN_SANDBOX`` (an opaque origin, no
cookies, no DOM access to the host), may load scripts, styles and images only from their own
plugin folder (scripts also from the SDK and the plugin kit), and may open no connection at
all: the bridge is their only channel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit
from uuid import UUID

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, HttpResponseNotFound
from django.http.request import split_domain_port, validate_host

SDK_PATH = "/static/bridge/kanban.js"
#: The built-in plugins' shared module and its stylesheet (bridge_js/static/bridge/), beside
#: the SDK: any plugin may import the one and link the other.
KIT_PATH = "/static/bridge/plugin-kit.js"
KIT_STYLE_PATH = "/static/bridge/plugin-kit.css"
#: The sandbox of every plugin document, as the board's iframe attribute and as its own CSP
#: (a plugin opened outside its frame keeps it). Scripts run in an opaque origin; a link may
#: open in a new tab (a card comment's link, on a click: popup blockers stop the rest) as an
#: ordinary page, which is all an <a href> anywhere on the web can do. No same-origin, no
#: top navigation, no forms, no modals: the frame cannot act as this site or leave its box.
#: Downloads: a card's file that is no image opens its signed link in a tab, which saves it;
#: Chromium blocks a download that a sandboxed frame starts, even in a tab it opened, unless
#: the frame allows them, and refuses one started without the person's click all the same.
PLUGIN_SANDBOX: Final = "allow-scripts allow-popups allow-popups-to-escape-sandbox allow-downloads"
PLUGIN_PREFIX = "/plugins/"


def _origin(request: HttpRequest) -> str:
    return f"{request.scheme}://{request.get_host()}"


def plugin_url(project_id: UUID, entry: str) -> str:
    """Where a board's iframe loads its plugin: this origin, or ``KANBAN_PLUGIN_ORIGIN``."""
    return f"{settings.KANBAN_PLUGIN_ORIGIN}{PLUGIN_PREFIX}{project_id}/{entry}"


DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def _normal_host(host: str, scheme: str) -> tuple[str, int]:
    """A Host as one name and port: lower case, no trailing dot (``localhost.`` is
    ``localhost`` to a resolver), the scheme's default port when none is given."""
    domain, port = split_domain_port(host)
    return domain.rstrip(".").lower(), int(port) if port.isdecimal() else DEFAULT_PORTS[scheme]


def on_plugin_host(request: HttpRequest) -> bool:
    """Whether the request came to the plugin origin's host. A name of its own (one none
    of the boards' hosts match) is the plugin host on any port and however spelled; a name
    the boards share (``localhost`` in development) only with the plugin origin's port."""
    return is_plugin_host(request.get_host())


def is_plugin_host(host: str) -> bool:
    """``on_plugin_host`` for a Host header's value."""
    plugin = urlsplit(settings.KANBAN_PLUGIN_ORIGIN)
    name, port = _normal_host(plugin.netloc, plugin.scheme)
    asked_name, asked_port = _normal_host(host, plugin.scheme)
    if asked_name != name:
        return False
    shared = validate_host(name, settings.KANBAN_MAIN_HOSTS)
    return asked_port == port or not shared


def _board_hosts() -> str:
    """The frame-ancestors of a plugin on its own origin: the hosts the boards are served
    from (ALLOWED_HOSTS, any port), never the plugin host itself."""
    sources: list[str] = []
    for host in settings.ALLOWED_HOSTS:
        if host == "*":
            return "*"
        if host.lower() == urlsplit(settings.KANBAN_PLUGIN_ORIGIN).hostname or host.startswith("["):
            continue  # CSP has no syntax for IPv6 literals
        if host.startswith("."):
            sources += [f"{host[1:]}:*", f"*{host}:*"]
        else:
            sources.append(f"{host}:*")
    return " ".join(sources) or "'none'"


def plugin_opened_at_top_level(request: HttpRequest) -> bool:
    """A plugin document loaded as the tab's page, not in a frame. There the sandbox leaves
    it free to navigate the tab anywhere (an open redirect on our origin) and to pass for a
    page of ours, so it is refused. Browsers without fetch metadata say nothing and are
    served; the sandbox still holds for them."""
    return request.headers.get("Sec-Fetch-Dest") == "document"


def plugin_top_level_refusal(project_id: UUID) -> HttpResponse:
    return HttpResponseForbidden(
        f"This is a plugin page: it runs only inside its board, /boards/{project_id}/ on the "
        "dashboard.\n",
        content_type="text/plain; charset=utf-8",
    )


def plugin_csp(request: HttpRequest, project_id: UUID) -> str:
    origin = _origin(request)
    ancestors = _board_hosts() if settings.KANBAN_PLUGIN_ORIGIN else "'self'"
    own = f"{origin}/plugins/{project_id}/"
    sdk = f"{origin}{SDK_PATH} {origin}{KIT_PATH}"
    return "; ".join(
        [
            f"sandbox {PLUGIN_SANDBOX}",
            "default-src 'none'",
            f"script-src {own} {sdk}",
            f"style-src {own} {origin}{KIT_STYLE_PATH} 'unsafe-inline'",
            f"img-src {own} data: blob:",
            f"font-src {own}",
            f"media-src {own}",
            "connect-src 'none'",
            "form-action 'none'",
            "base-uri 'none'",
            f"frame-ancestors {ancestors}",
        ]
    )


def host_csp(request: HttpRequest) -> str:
    """The board host page: our own scripts only; it frames plugin pages and opens the
    bridge websocket to this origin."""
    ws_scheme = "wss" if request.is_secure() else "ws"
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data:",
            f"connect-src 'self' {ws_scheme}://{request.get_host()}",
            f"frame-src 'self' {settings.KANBAN_PLUGIN_ORIGIN}".rstrip(),
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


#: Every page that sets no policy of its own (login, dashboard, admin, API docs, errors).
DEFAULT_CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class DefaultContentSecurityPolicyMiddleware:
    """Gives every response without its own Content-Security-Policy the default one, so no
    page type is left unprotected by accident."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = DEFAULT_CSP
        return response


class PluginOriginMiddleware:
    """With ``KANBAN_PLUGIN_ORIGIN`` set, plugin files are served on that host only, and that
    host serves nothing else but static files (the SDK): no login, no API, no cookies."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if settings.KANBAN_PLUGIN_ORIGIN:
            plugin_host = on_plugin_host(request)
            path = request.path
            plugin_file = path.startswith(PLUGIN_PREFIX)
            static = path.startswith(str(settings.STATIC_URL))
            if plugin_file != plugin_host and not (plugin_host and static):
                return HttpResponseNotFound(b"Not Found\n", content_type="text/plain")
        return self.get_response(request)


class NotOnPluginHost:
    """An ASGI app served beside Django (``/mcp/``) under the plugin host's rule, which
    Django's ``PluginOriginMiddleware`` applies to everything else: the plugin host serves
    none of it (404)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if settings.KANBAN_PLUGIN_ORIGIN and scope["type"] == "http":
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
            if host and is_plugin_host(host):
                headers = [(b"content-type", b"text/plain")]
                await send({"type": "http.response.start", "status": 404, "headers": headers})
                await send({"type": "http.response.body", "body": b"Not Found\n"})
                return
        await self.app(scope, receive, send)
