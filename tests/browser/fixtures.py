"""Chromium fixtures, shared by every directory that drives a browser (tests/browser,
tests/reliability): defined once here and imported by tests/conftest.py, so a run holds one
Chromium and one Playwright session however many directories use them. Documented in
tests/browser/conftest.py."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from django.db import connections

from tests.browser.chromium import (
    CHROMIUM,
    CHROMIUM_ARGS,
    VIEWPORT,
    Chromium,
    browser_unavailable,
)
from tests.live import LiveServer

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    """One headless Chromium for the whole run; tests isolate themselves with contexts."""
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        browser_unavailable("the playwright package is not installed")
    # As long as an action waits (below): a page is slower while the suite runs over both
    # cores, and a wait that gives up first fails a test that was only late.
    expect.set_options(timeout=10_000)
    if not os.access(CHROMIUM, os.X_OK):
        browser_unavailable(f"no Chromium executable at {CHROMIUM}")
    with sync_playwright() as playwright:
        chromium = Chromium.launched(
            playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
        )
        yield chromium
        chromium.lend()
        chromium.browser.close()


@pytest.fixture
def browser(request: pytest.FixtureRequest, chromium: Chromium) -> Iterator[Browser]:
    """The run's Chromium, lent to one sync test. Per-test browser fixtures depend on this
    one, so it is taken back after their last Playwright call.

    During the test the ORM is allowed although Playwright's loop is marked running
    (``DJANGO_ALLOW_ASYNC_UNSAFE``, Django's documented switch, for this test only).
    """
    if request.node.get_closest_marker("browser") is None:
        pytest.fail("a test that drives Chromium must be marked @pytest.mark.browser")
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    chromium.lend()
    try:
        yield chromium.browser
    finally:
        # While the loop is marked running, Django keeps this thread's connections in
        # asgiref's per-context storage; close them before the mark goes and hides them.
        for connection in connections.all(initialized_only=True):
            connection.close()
        chromium.take_back()
        if previous is None:
            del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def new_context(
    browser: Browser, live_servers: Callable[..., list[LiveServer]]
) -> Iterator[Callable[..., BrowserContext]]:
    """``new_context(base_url=..., **playwright_options)``: a fresh browser profile
    (cookies, storage) per call, closed after the test. Console messages and page errors
    are printed at teardown, so pytest shows them when the test fails.

    It depends on ``live_servers`` so that pages (and their websockets) close before the
    workers are stopped."""
    contexts: list[BrowserContext] = []
    log: list[str] = []

    def open_context(**options: Any) -> BrowserContext:
        options.setdefault("viewport", VIEWPORT)
        context = browser.new_context(**options)
        context.set_default_timeout(10_000)
        context.on("console", lambda message: log.append(f"console.{message.type}: {message.text}"))
        context.on("weberror", lambda error: log.append(f"page error: {error.error}"))
        contexts.append(context)
        return context

    yield open_context
    for context in contexts:
        context.close()
    if log:
        print("--- browser console:\n" + "\n".join(log))
