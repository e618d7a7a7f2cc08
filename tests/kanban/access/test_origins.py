"""A browser's Origin must be the page's own origin (same scheme, host AND port) or trusted,
and the Host one of ALLOWED_HOSTS: the websocket bridge and MCP both ask here."""

from __future__ import annotations

from typing import Any

import pytest

from kanban.access.origins import host_allowed, origin_allowed, request_scheme


@pytest.mark.parametrize(
    ("origin", "host", "allowed"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000", True),
        ("http://127.0.0.1:1", "127.0.0.1:8000", False),
        ("http://localhost:3000", "localhost:8000", False),
        ("https://kanban.example.com", "kanban.example.com", True),
        ("https://kanban.example.com:443", "kanban.example.com", True),
        ("https://kanban.example.com:8443", "kanban.example.com", False),
        ("https://evil.example", "kanban.example.com", False),
        ("https://kanban.example.com.evil.example", "kanban.example.com", False),
        ("null", "127.0.0.1:8000", False),
        ("file://", "127.0.0.1:8000", False),
        ("http://[::1]:8000", "[::1]:8000", True),
        ("http://127.0.0.1:notaport", "127.0.0.1:8000", False),
        (None, "127.0.0.1:8000", False),
        ("http://127.0.0.1:8000", None, False),
        ("http://127.0.0.1:9999", "127.0.0.1:8000", False),
        ("http://127.0.0.1:8000/path", "127.0.0.1:8000", False),
        ("http://user@127.0.0.1:8000", "127.0.0.1:8000", False),
    ],
)
def test_only_the_pages_own_origin_may_open_the_bridge(
    origin: str | None, host: str | None, allowed: bool
) -> None:
    assert origin_allowed(origin, host) is allowed


def test_a_trusted_origin_is_accepted(settings: Any) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://boards.example.com"]
    assert origin_allowed("https://boards.example.com", "internal:8000")
    assert not origin_allowed("http://boards.example.com", "internal:8000")


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8000", True),
        ("localhost", True),
        ("LOCALHOST:1", True),
        ("[::1]:8000", True),
        ("evil.example", False),
        ("127.0.0.1.evil.example:8000", False),
        ("", False),
        (None, False),
    ],
)
def test_the_host_is_one_of_allowed_hosts_by_djangos_rule(host: str | None, allowed: bool) -> None:
    assert host_allowed(host) is allowed


def test_allowed_hosts_patterns_apply_as_django_applies_them(settings: Any) -> None:
    settings.ALLOWED_HOSTS = [".example.com"]
    assert host_allowed("kanban.example.com:443") and host_allowed("example.com")
    assert not host_allowed("example.com.evil.example")


def test_with_the_scheme_known_the_whole_origin_is_compared() -> None:
    assert origin_allowed("http://127.0.0.1:8000", "127.0.0.1:8000", scheme="http")
    assert not origin_allowed("https://127.0.0.1:8000", "127.0.0.1:8000", scheme="http")
    assert origin_allowed("https://kanban.example.com", "kanban.example.com", scheme="https")


def test_the_scheme_is_the_trusted_proxys_when_the_settings_name_one(settings: Any) -> None:
    plain = {"scheme": "http", "headers": []}
    forwarded = {"scheme": "http", "headers": [(b"x-forwarded-proto", b"https")]}
    assert request_scheme(plain) == "http" and request_scheme(forwarded) == "http"
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert request_scheme(forwarded) == "https" and request_scheme(plain) == "http"
    assert request_scheme({"scheme": "wss", "headers": []}) == "https"
