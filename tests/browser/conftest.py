"""Chromium through Playwright, against daphne workers (``live_server`` in tests/conftest.py).

Playwright drives Debian's ``/usr/bin/chromium`` (``KANBAN_CHROMIUM`` overrides); its own
browser downloads are never used. Without a browser these tests skip, unless
``KANBAN_REQUIRE_BROWSER=1`` turns the skip into a failure (CI sets it).

Every test here is marked ``@pytest.mark.browser`` (``-m "not browser"`` leaves them out)
and is transactional, because the page talks to a worker process.

Fixtures: ``chromium`` (the one browser process of the run), ``browser`` (that browser,
lent to one sync test), ``new_context(**options)`` (a fresh profile), ``page`` (a page
whose relative URLs go to ``live_server``). Steps such as logging in are in helpers.py.
The first three are defined in fixtures.py and imported by tests/conftest.py, so that
tests/reliability shares the run's one Chromium.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from tests.live import LiveServer

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page


@pytest.fixture
def page(new_context: Callable[..., BrowserContext], live_server: LiveServer) -> Page:
    """A page in a fresh context whose relative URLs go to ``live_server``."""
    return new_context(base_url=live_server.url).new_page()
