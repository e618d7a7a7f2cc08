"""A board's webhook in Chromium: alice adds one on the board's Webhooks page (reached from
its members page) and copies its secret; bob moves a card on the Board page; the receiver
(a real HTTP server the test runs) gets the signed card.moved within 2 s, derived in the
daphne worker that committed bob's write and posted by the database worker; alice sees it
delivered in the log and sends a test."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from kanban.webhooks.signing import signature_verify
from tests.browser.demo_board import Demo, Person, demo, open_board
from tests.browser.helpers import signed_in_page
from tests.kanban.webhooks.conftest import Receiver, allow_private, receiver, worker
from tests.live import LiveServer

__all__ = ["allow_private", "demo", "open_board", "receiver", "worker"]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.usefixtures("allow_private", "worker")
def test_bob_moves_a_card_and_alices_receiver_hears_it(
    demo: Demo,
    open_board: Callable[..., Person],
    new_context: Callable[..., BrowserContext],
    live_servers: Callable[..., list[LiveServer]],
    receiver: Receiver,
) -> None:
    (server,) = live_servers(1, env={"KANBAN_WEBHOOKS_ALLOW_PRIVATE": "1"})
    alice = signed_in_page(demo.people["alice"], new_context, server)
    alice.goto(f"/boards/{demo.board.id}/members/")
    alice.get_by_test_id("webhooks-link").click()
    expect(alice.get_by_test_id("no-webhooks")).to_be_visible()
    alice.get_by_label("URL").fill(receiver.url)
    for label in ("Card added", "Card changed", "Card archived", "Comment added"):
        alice.get_by_label(label).uncheck()
    alice.get_by_role("button", name="Add webhook").click()
    secret = alice.get_by_test_id("webhook-secret").inner_text().strip()

    bob = open_board("bob", server=server)
    moved_at = time.monotonic()
    bob.act("actions.moveCard('c1', 'done')")
    (got,) = receiver.wait_for(1, timeout=5)

    assert got.at - moved_at < 2.0, f"took {got.at - moved_at:.2f} s"
    assert signature_verify(
        secret=secret,
        header=got.headers["X-Kanban-Signature"],
        body=got.body,
        now=int(time.time()),
    )
    payload = json.loads(got.body)
    assert payload["event"] == "card.moved" and payload["actor"] == "bob"
    assert payload["data"]["card"]["id"] == "c1" and payload["data"]["to"] == {"column": "done"}

    # The receiver hears the POST before the database worker records its answer, so the
    # log may still say pending for a moment: alice reloads until it does not.
    delivery = alice.get_by_test_id("delivery").first
    deadline = time.monotonic() + 10
    while True:
        alice.reload()
        if delivery.get_attribute("data-status") != "pending" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    expect(delivery).to_have_attribute("data-status", "succeeded")
    expect(delivery.get_by_test_id("delivery-code")).to_have_text("200")
    alice.get_by_test_id("webhook-test").click()
    expect(alice.get_by_test_id("webhook-tested")).to_be_visible()
    (*_, ping) = receiver.wait_for(2, timeout=5)
    assert ping.headers["X-Kanban-Event"] == "ping"
