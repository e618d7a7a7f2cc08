"""Where a webhook may post: http or https, no credentials in the URL, and (unless the
operator sets ``KANBAN_WEBHOOKS_ALLOW_PRIVATE``) only public addresses: never loopback,
private, link-local, shared, multicast, reserved or unspecified ones.

The address is checked when the URL is saved (a literal IP, or what the name resolves to
then) and again at every delivery, after resolving the name: the request then connects to
the very address that was checked (``Target.ip``), so a name that resolves elsewhere the
second time (DNS rebinding) gains nothing. Redirects are never followed, so no redirect can
lead past the check: a 3xx answer is a failed delivery.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Final
from urllib.parse import SplitResult, urlsplit

from django.conf import settings

from storage.errors import ErrorCode, KanbanError, invalid_argument

MAX_URL: Final = 2000
_SCHEMES: Final = {"http": 80, "https": 443}

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, slots=True)
class Target:
    """A checked URL and the one address a delivery connects to."""

    scheme: str
    host: str
    port: int
    path: str
    ip: str


def check_webhook_url(url: object) -> str:
    """The URL as saved; refused (``invalid_argument``, field ``url``, a ``reason``) when it
    is no http(s) URL, carries credentials, or names an address that is not allowed."""
    parts = _parts(url)
    host = parts.hostname or ""
    literal = _literal(host)
    if literal is not None:
        _check_ip(literal, host)
    else:
        try:
            for ip in _resolve(host, parts.port or _SCHEMES[parts.scheme]):
                _check_ip(ip, host)
        except KanbanError as refused:
            if refused.details.get("reason") == "address":
                raise
            # Unknown now (no network, a name made later): the delivery resolves it again.
    return str(url)


def webhook_target(url: str) -> Target:
    """Resolve the URL's host now and pick the address to connect to, every candidate
    checked; refused (``forbidden``, reason ``address``) when one is not allowed."""
    parts = _parts(url)
    host = parts.hostname or ""
    port = parts.port or _SCHEMES[parts.scheme]
    literal = _literal(host)
    ips = [literal] if literal is not None else _resolve(host, port)
    for ip in ips:
        _check_ip(ip, host)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(parts.scheme, host, port, path, str(ips[0]))


def _parts(url: object) -> SplitResult:
    if not isinstance(url, str) or not url.strip():
        raise invalid_argument("a webhook needs a URL", field="url", reason="missing")
    if len(url) > MAX_URL or any(ch.isspace() or not ch.isprintable() for ch in url):
        raise invalid_argument(
            f"a URL is at most {MAX_URL} characters, without spaces", field="url", reason="form"
        )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port out of range raises here
    except ValueError:
        raise invalid_argument("not a URL", field="url", reason="form") from None
    if parts.scheme not in _SCHEMES:
        raise invalid_argument(
            f"a webhook URL starts with http:// or https://, not {parts.scheme or 'nothing'}:",
            field="url",
            reason="scheme",
        )
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise invalid_argument(
            "a webhook URL carries no user name or password; the signature proves the sender",
            field="url",
            reason="credentials",
        )
    if not parts.hostname:
        raise invalid_argument("a webhook URL names a host", field="url", reason="form")
    return parts


def _literal(host: str) -> IpAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _resolve(host: str, port: int) -> list[IpAddress]:
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise KanbanError(
            ErrorCode.UNAVAILABLE, f"cannot resolve {host}", field="url", reason="dns"
        ) from None
    ips = list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found))
    if not ips:
        raise KanbanError(ErrorCode.UNAVAILABLE, f"{host} has no address", reason="dns")
    return ips


def ip_allowed(ip: IpAddress) -> bool:
    """Public unicast only; an IPv4 address written as IPv6 is judged as itself."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


def _check_ip(ip: IpAddress, host: str) -> None:
    if settings.KANBAN_WEBHOOKS_ALLOW_PRIVATE or ip_allowed(ip):
        return
    named = host if host == str(ip) else f"{host} ({ip})"
    raise invalid_argument(
        f"webhooks may not reach {named}: a loopback, private, link-local or reserved "
        "address (the operator can allow them: KANBAN_WEBHOOKS_ALLOW_PRIVATE)",
        field="url",
        reason="address",
    )
