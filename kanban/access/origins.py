"""Which pages may call us: the one same-origin rule of the websocket bridge and of MCP.

A browser sends cookies (and a local agent endpoint answers) whatever page opened the
connection, so a browser's ``Origin`` must be the very origin the browser reached us at
(scheme, host and port; the Host header carries no scheme, and a missing port means the
scheme's default) or one listed in ``CSRF_TRUSTED_ORIGINS``. And the Host itself must be one
of ``ALLOWED_HOSTS``, by Django's own rule, on paths Django's request handling never sees.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}


def host_allowed(host_header: str | None) -> bool:
    """``Host`` is one of ``ALLOWED_HOSTS`` (patterns and all), as Django decides it."""
    if not host_header:
        return False
    domain, _ = split_domain_port(host_header)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


def request_scheme(scope: dict[str, Any]) -> str:
    """``http`` or ``https``, as Django decides it for a request: the trusted proxy's header
    when ``SECURE_PROXY_SSL_HEADER`` names one, else the connection's own scheme."""
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy:
        header, secure = proxy
        name = header.removeprefix("HTTP_").replace("_", "-").lower().encode("latin-1")
        sent = dict(scope.get("headers") or []).get(name)
        if sent is not None:
            first = sent.decode("latin-1").split(",")[0].strip()
            return "https" if first == secure else "http"
    return "https" if scope.get("scheme") in ("https", "wss") else "http"


def origin_allowed(
    origin: str | None, host_header: str | None, *, scheme: str | None = None
) -> bool:
    """True when ``origin`` names the host and port the browser reached us at, and the
    scheme too when the caller knows it (``request_scheme``).

    Without the scheme, ``https://kanban.example.com`` matches ``Host: kanban.example.com``
    behind a TLS-terminating proxy, while ``http://kanban.example.com:3000`` does not.
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
    if page.path or page.query or page.fragment or page.username is not None:
        return False  # an Origin is scheme://host[:port] and nothing else
    trusted = {o.lower().rstrip("/") for o in settings.CSRF_TRUSTED_ORIGINS}
    if f"{page.scheme}://{page.netloc.lower()}" in trusted:
        return True
    if scheme is not None and page.scheme != scheme:
        return False
    default = DEFAULT_PORTS[page.scheme]
    return (page.hostname.lower(), page_port or default) == (
        served.hostname.lower(),
        served_port or default,
    )
