"""Notifications by email, in Chromium: bob mentions alice on a card, and alice (immediately)
gets one mail, through the worker and a real SMTP server process, whose link opens that
card; bob assigns carol two cards, and her daily digest holds both; the mail's unsubscribe
link works in a browser that is signed in as nobody."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, expect

from kanban.accounts.email_notifications import digests_send, email_settings_set
from kanban.models import Notification, OutgoingEmail
from tests.browser.demo_board import Demo, Person, demo, open_board
from tests.browser.helpers import signed_in_page
from tests.kanban.jobs.conftest import run_worker, smtp
from tests.kanban.jobs.smtp import SmtpServer, text_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo", "open_board", "smtp"]


def assign(bob: Person, card: str, who: str) -> None:
    bob.plugin.get_by_test_id(f"card-{card}").dblclick()
    bob.plugin.get_by_test_id("dialog-members").click()
    bob.plugin.get_by_test_id(f"assign-{who}").check()
    bob.plugin.get_by_test_id("card-save").click()
    expect(bob.plugin.locator("#card-dialog")).to_be_hidden()


@pytest.mark.long
def test_a_mention_mails_alice_a_link_to_the_card_and_carols_digest_holds_two(
    demo: Demo,
    open_board: Callable[..., Person],
    live_servers: Callable[..., list[Any]],
    new_context: Callable[..., BrowserContext],
    smtp: SmtpServer,
    settings: Any,
) -> None:
    # Links in mail name the server people open: this test's own.
    (server,) = live_servers(1, env={"KANBAN_SITE_URL": "http://127.0.0.1:{live_port}"})
    settings.KANBAN_SITE_URL = server.url
    alice, carol = demo.people["alice"], demo.people["carol"]
    email_settings_set(user=alice, email="alice@example.com", choice="immediately")
    email_settings_set(user=carol, email="carol@example.com", choice="digest")

    bob = open_board("bob", server=server)
    bob.plugin.get_by_test_id("card-c1").dblclick()
    bob.plugin.get_by_test_id("comment-input").fill("@alice please look at the outline")
    bob.plugin.get_by_test_id("comment-post").click()
    expect(bob.plugin.get_by_test_id("comments-list").locator("li")).to_have_count(1)
    bob.plugin.locator("#card-cancel").click()
    assign(bob, "c2", "carol")
    assign(bob, "c3", "carol")
    deadline = time.monotonic() + 10
    while Notification.objects.filter(user=carol).count() < 2:  # the notify calls land
        assert time.monotonic() < deadline, "bob's assignments did not notify carol"
        time.sleep(0.05)

    run_worker()
    [mail] = smtp.wait_for(1)
    assert mail["To"] == "alice@example.com"
    assert "mentioned you on “Write the onboarding guide”" in mail["Subject"]
    link = re.search(r"Open it: (\S+)", text_of(mail))
    assert link and link.group(1) == f"{server.url}/boards/{demo.board.id}/#card=c1"

    alices = signed_in_page(alice, new_context, server)
    alices.goto(link.group(1))
    dialog = alices.frame_locator("#plugin-frame").locator("#card-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("@alice please look at the outline")

    assert OutgoingEmail.objects.count() == 1, "carol waits for her digest"
    assert digests_send() == 1
    run_worker()
    digest = smtp.wait_for(2)[-1]
    assert digest["To"] == "carol@example.com"
    assert "assigned you “Order M6 bolts”" in text_of(digest)
    assert "assigned you “Fix the login redirect”" in text_of(digest)

    unsubscribe = re.search(r"Unsubscribe in one click: (\S+)", text_of(mail))
    assert unsubscribe
    nobody = new_context(base_url=server.url).new_page()
    nobody.goto(unsubscribe.group(1))
    nobody.get_by_test_id("unsubscribe-confirm").click()
    expect(nobody.get_by_test_id("unsubscribed")).to_contain_text(
        "@alice gets no more notification emails"
    )
