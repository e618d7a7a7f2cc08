"""Content Security Policies, one builder per page type.

Plugin pages run third-party code: they get ``sandbox allow-scripts`` (an opaque origin, no
cookies, no DOM access to the host), may load scripts, styles and images only from their own
plugin folder and the SDK, and may open no connection at all: the bridge is their only channel.
"""

from __future__ import annotations

from collections.abc import Callable
from uuid import UUID

from django.http import HttpRequest, HttpResponse

SDK_PATH = "/static/bridge/kanban.js"


def _origin(request: HttpRequest) -> str:
    return f"{request.scheme}://{request.get_host()}"


def plugin_csp(request: HttpRequest, project_id: UUID) -> str:
    origin = _origin(request)
    own = f"{origin}/plugins/{project_id}/"
    sdk = f"{origin}{SDK_PATH}"
    return "; ".join(
        [
            "sandbox allow-scripts",
            "default-src 'none'",
            f"script-src {own} {sdk}",
            f"style-src {own} 'unsafe-inline'",
            f"img-src {own} data: blob:",
            f"font-src {own}",
            f"media-src {own}",
            "connect-src 'none'",
            "form-action 'none'",
            "base-uri 'none'",
            "frame-ancestors 'self'",
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
            "frame-src 'self'",
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
