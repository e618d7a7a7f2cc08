"""The built-in Board on a real daphne worker, as the browser tests open it: the demo's
people (alice owner, bob developer, carol guest), each in a browser profile of their own,
and a relay that keeps what a page sends over the bridge."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import BrowserContext, Frame, FrameLocator, Page, WebSocketRoute, expect

from kanban.data.demo import demo_load
from kanban.models import Project
from tests.browser.helpers import log_in_by_cookie
from tests.live import LiveServer

PLUGIN_URL = re.compile(r"/plugins/[0-9a-f-]+/index\.html$")


@dataclass(frozen=True)
class Demo:
    board: Project
    inventory: Project
    people: dict[str, User]


@pytest.fixture
def demo() -> Demo:
    """The demo data, loaded into this test's empty database the way ``serve`` does."""
    assert demo_load(), "the database was not empty"
    return Demo(
        board=Project.objects.get(name="Board"),
        inventory=Project.objects.get(name="Inventory"),
        people={user.username: user for user in User.objects.all()},
    )


@dataclass
class Person:
    """Somebody with the board open in their own browser profile."""

    page: Page

    @property
    def plugin(self) -> FrameLocator:
        return self.page.frame_locator("#plugin-frame")

    @property
    def frame(self) -> Frame:
        # The host says "Live" from its own socket, which can be a moment before the plugin
        # frame's navigation is committed on a busy machine: wait for the frame, briefly.
        deadline = time.monotonic() + 5
        while (found := self.page.frame(url=PLUGIN_URL)) is None and time.monotonic() < deadline:
            self.page.wait_for_timeout(50)
        assert found is not None, "the plugin frame is not there"
        return found

    def state(self) -> dict[str, Any]:
        return dict(self.frame.evaluate("boardDebug.state"))

    def wait_for(self, condition: str, timeout: float = 10.0) -> None:
        """Wait until ``condition`` (a JavaScript expression, in the plugin) holds. Polled
        from here: the plugin's CSP forbids the eval that ``wait_for_function`` needs."""
        deadline = time.monotonic() + timeout
        while not self.frame.evaluate(condition):
            if time.monotonic() > deadline:
                raise AssertionError(f"still false after {timeout} s: {condition}")
            self.page.wait_for_timeout(50)

    def act(self, call: str, arg: Any = None) -> None:
        """Run ``call``, JavaScript, in the plugin with the Board's own modules in scope:
        ``actions`` (board-actions.js), ``board`` (board-state.js) and ``changes``
        (board-changes.js), and ``arg``. The page imports them again, which gives it the
        instances its app.js runs (one of each module a page), so a call does what a click
        does; the Board puts nothing on ``window`` for this. Not awaited: a delete waits
        for its confirmation."""
        self.frame.evaluate(
            "async (arg) => { const [actions, board, changes] = await Promise.all(["
            "import('./board-actions.js'), import('./board-state.js'),"
            f" import('./board-changes.js')]); {call}; }}",
            arg,
        )

    def card_column(self, card_id: str) -> str:
        return str(
            self.frame.evaluate(f"boardDebug.state.cards.find((c) => c.id === '{card_id}').column")
        )


@pytest.fixture
def open_board(
    demo: Demo, new_context: Callable[..., BrowserContext], live_server: LiveServer
) -> Iterator[Callable[..., Person]]:
    def open_as(
        username: str,
        *,
        route: Callable[[WebSocketRoute], Any] | None = None,
        viewport: dict[str, int] | None = None,
        server: LiveServer = live_server,
        fragment: str = "",
    ) -> Person:
        options: dict[str, Any] = {"viewport": viewport} if viewport else {}
        context = new_context(base_url=server.url, **options)
        log_in_by_cookie(context, demo.people[username], server.url)
        page = context.new_page()
        if route is not None:
            page.route_web_socket(re.compile(r"/ws/boards/"), route)
        page.goto(f"/boards/{demo.board.id}/{fragment}")
        expect(page.locator("#bridge-status")).to_have_text("Live")
        person = Person(page)
        person.wait_for("window.boardDebug && boardDebug.state.loaded")
        return person

    yield open_as


class FrameLog:
    """Relays the bridge websocket, keeping every frame the page sends."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def route(self, client: WebSocketRoute) -> None:
        server = client.connect_to_server()

        def upstream(message: str | bytes) -> None:
            self.sent.append(json.loads(message))
            server.send(message)

        client.on_message(upstream)
        server.on_message(client.send)

    def clear(self) -> None:
        self.sent.clear()

    def reads(self) -> list[dict[str, Any]]:
        """The reads among them: what a change cost the page."""
        return [f for f in self.sent if f.get("op") in ("get", "getMany")]
