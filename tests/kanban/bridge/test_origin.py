"""The websocket Origin must be the page's own origin: same host AND port, or trusted."""

from __future__ import annotations

from typing import Any

import pytest

from kanban.bridge.origin import origin_allowed


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
