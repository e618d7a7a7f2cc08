"""Chromium through Playwright, against daphne workers (``live_server`` in tests/conftest.py).

Playwright drives Debian's ``/usr/bin/chromium`` (``KANBAN_CHROMIUM`` overrides); its own
browser downloads are never used. Without a browser these tests skip, unless
``KANBAN_REQUIRE_BROWSER=1`` turns the skip into a failure (CI sets it).

Every test here is marked ``@pytest.mark.browser`` (``-m "not browser"`` leaves them out)
and is transactional, because the page talks to a worker process.

Fixtures: ``chromium`` (the one browser process of the run), ``browser`` (that browser,
lent to one sync test), ``new_context(**options)`` (a fresh profile), ``page`` (a page
whose relative URLs go to ``live_server``), and ``live_server``: here one worker for the
whole module, since starting one per test was a good part of this folder's time; a test
that stops or kills it leaves the next one a new worker. Steps such as logging in are in helpers.py.
The first three are defined in fixtures.py and imported by tests/conftest.py, so that
tests/reliability shares the run's one Chromium.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest

from tests.live import LiveServer, start_live_servers

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page


class ModuleServer:
    """The module's one worker, started by its first test and again if a test ended it."""

    def __init__(self) -> None:
        self.server: LiveServer | None = None

    def current(self) -> LiveServer:
        if self.server is None or not self.server.running:
            self.stop()
            (self.server,) = start_live_servers(1)
        return self.server

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server.remove_log()
            self.server = None


@pytest.fixture(scope="module")
def _module_server(django_db_setup: None) -> Iterator[ModuleServer]:
    shared = ModuleServer()
    yield shared
    shared.stop()


@pytest.fixture
def live_server(transactional_db: None, _module_server: ModuleServer) -> Iterator[LiveServer]:
    """The module's worker on the test database (see the module docstring). Between tests
    the database is flushed as for any transactional test; what a worker keeps in memory is
    keyed by ids a flush does not hand out again (projects are UUIDs) or is reset by the
    tests that depend on it, which take their own worker (``live_servers(env=...)``)."""
    server = _module_server.current()
    start = _log_size(server)
    yield server
    # As the per-test fixture does, the worker's output goes with the test's report.
    print(f"--- {server!r} output during this test:\n{_log_since(server, start)}")


def _log_size(server: LiveServer) -> int:
    try:
        return server.log_path.stat().st_size
    except FileNotFoundError:
        return 0


def _log_since(server: LiveServer, offset: int) -> str:
    try:
        with server.log_path.open("rb") as log:
            log.seek(offset)
            return log.read()[-6000:].decode(errors="replace")
    except FileNotFoundError:
        return ""


@pytest.fixture
def page(new_context: Callable[..., BrowserContext], live_server: LiveServer) -> Page:
    """A page in a fresh context whose relative URLs go to ``live_server``."""
    return new_context(base_url=live_server.url).new_page()
