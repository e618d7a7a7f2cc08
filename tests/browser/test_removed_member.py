"""A member removed while their board is open loses it, every time, within a second:
across two workers on one Redis, whichever worker the page is on, and also when the page's
socket had just dropped and it reconnects after the removal (its reconnect is refused with
4403, which ends the board, instead of being retried forever)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, WebSocketRoute, expect

from kanban.access.memberships import membership_set
from tests.browser.helpers import log_in_by_cookie
from tests.factories import a_board, users
from tests.kanban.bridge.test_scale_out import redis_layer, redis_reachable
from tests.live import LiveServer

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not redis_reachable(), reason="needs Redis between the two workers"),
]
__all__ = ["redis_layer"]

ROUNDS = 20


class Droppable:
    """Relays the page's bridge socket, and can drop it as a network fault would."""

    def __init__(self) -> None:
        self.client: WebSocketRoute | None = None

    def route(self, client: WebSocketRoute) -> None:
        self.client = client
        server = client.connect_to_server()
        client.on_message(server.send)
        server.on_message(client.send)

    def drop(self) -> None:
        assert self.client is not None
        self.client.close(code=1006)


@pytest.mark.long
def test_a_removed_member_loses_the_open_board_every_time_within_a_second(
    live_servers: Callable[..., list[LiveServer]],
    redis_layer: dict[str, str],
    new_context: Callable[..., BrowserContext],
) -> None:
    workers = live_servers(2, env=redis_layer)
    alice, carol = users("alice", "carol")
    board = a_board(owner=alice, name="Shared")
    ended_after: list[float] = []
    for n in range(ROUNDS):
        worker = workers[n % 2]
        membership_set(user=carol, project=board, role="developer")
        context = new_context(base_url=worker.url)
        log_in_by_cookie(context, carol, worker.url)
        page = context.new_page()
        relay = Droppable()
        page.route_web_socket(re.compile(r"/ws/boards/"), relay.route)
        page.goto(f"/boards/{board.id}/")
        expect(page.locator("#bridge-status")).to_have_text("Live")
        if n % 4 >= 2:
            relay.drop()  # carol is reconnecting when she is removed
        membership_set(user=carol, project=board, role=None)
        removed = time.monotonic()
        expect(page.get_by_test_id("board-ended")).to_be_visible(timeout=1_000)
        ended_after.append(time.monotonic() - removed)
        expect(page.get_by_test_id("board-ended")).to_contain_text("no longer have access")
        context.close()
    print(f"boards ended after {max(ended_after):.3f} s at most ({ROUNDS} removals)")
    assert len(ended_after) == ROUNDS
