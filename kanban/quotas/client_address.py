"""Who is on the other end of a request: the one place that reads a client's address.

Daphne runs without ``--proxy-headers``, so ``REMOTE_ADDR`` is always the peer that opened
the connection. Only when that peer is a proxy the deployment names in
``KANBAN_TRUSTED_PROXIES`` is ``X-Forwarded-For`` read, and then from the right: each
trusted proxy appends the address it saw, so the first entry from the right that is not a
trusted proxy is the client. Entries further left were written by the client and prove
nothing, which is why daphne's own rule (the first entry) cannot be used.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import TypeAlias

from django.conf import settings
from django.http import HttpRequest

Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network
Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address


@lru_cache(maxsize=8)
def _trusted(entries: tuple[str, ...]) -> tuple[Network, ...]:
    # The settings checked each entry when the process started.
    return tuple(ipaddress.ip_network(entry) for entry in entries)


def _address(text: str) -> Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[2001:db8::1]:443"
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "192.0.2.1:443"
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def client_address(request: HttpRequest) -> str | None:
    """The client's address as text, or None when there is none to trust."""
    peer = _address(str(request.META.get("REMOTE_ADDR") or ""))
    if peer is None:
        return None
    trusted = _trusted(tuple(settings.KANBAN_TRUSTED_PROXIES))
    if not any(peer in network for network in trusted):
        return str(peer)
    forwarded = str(request.META.get("HTTP_X_FORWARDED_FOR") or "").split(",")
    for entry in reversed(forwarded):
        address = _address(entry)
        if address is None:
            # Something no proxy of ours wrote: nothing further left can be trusted either.
            return str(peer)
        if not any(address in network for network in trusted):
            return str(address)
    return str(peer)
