"""A card's checklist and comments in the Board, with alice (owner), bob (developer) and
carol (guest) each in a browser of their own: comments and their @mentions, live for
everyone with the card open and counted on its face; a checklist ticked by one and seen by
the other; a guest who reads both and writes neither; and a link that opens the card."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import FrameLocator, expect

from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from kanban.data.notifications import notification_send, notifications_list
from kanban.data.target import Target
from tests.browser.demo_board import Demo, Person, demo, open_board
from tests.factories import a_board, board_data
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo", "open_board"]


def open_card(person: Person, card_id: str) -> FrameLocator:
    person.plugin.get_by_test_id(f"card-{card_id}").dblclick()
    expect(person.plugin.locator("#card-dialog")).to_be_visible()
    return person.plugin


def stored(demo: Demo, key: str) -> Any:
    entry = project_kv_get(
        target=Target(user=demo.people["alice"], project_id=demo.board.id), key=key
    )
    return None if entry is None else entry.value


def test_alice_mentions_bob_who_sees_it_live_ticks_her_checklist_and_carol_only_reads(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice, bob, carol = open_board("alice"), open_board("bob"), open_board("carol")
    bobs = open_card(bob, "c1")
    expect(bobs.get_by_test_id("comments-list")).to_have_count(1)
    expect(bobs.locator("#comments-status")).to_have_text("No comments yet.")

    # Alice types "@b": the members it may be are offered, Enter takes the first.
    alices = open_card(alice, "c1")
    box = alices.get_by_test_id("comment-input")
    box.press_sequentially("@b")
    expect(alices.get_by_test_id("mention-choices")).to_contain_text("Bob Okafor @bob")
    box.press("Enter")
    box.press_sequentially("please check https://example.com/spec. <b>not bold</b>")
    expect(box).to_have_value("@bob please check https://example.com/spec. <b>not bold</b>")
    alices.get_by_test_id("comment-post").click()

    # Bob's open dialog shows it at once; the link opens in a tab of its own, the rest is text.
    comment = bobs.get_by_test_id("comments-list").locator("li")
    expect(comment).to_have_count(1)
    expect(comment).to_contain_text("Alice Martin")
    expect(comment).to_contain_text("@bob please check")
    link = comment.locator("a")
    expect(link).to_have_attribute("href", "https://example.com/spec")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(link).to_have_attribute("target", "_blank")
    expect(comment.locator("b")).to_have_count(0)
    expect(comment).to_contain_text("<b>not bold</b>")
    expect(comment.get_by_role("button", name="Edit")).to_have_count(0)  # not his
    expect(carol.plugin.get_by_test_id("comments-c1")).to_have_text("1")  # the card's face
    # The mention reached Bob's inbox: the count in his open page's top bar went up.
    expect(bob.page.get_by_test_id("inbox-count")).to_have_attribute("data-unread", "1")
    expect(carol.page.get_by_test_id("inbox-count")).to_have_attribute("data-unread", "0")

    # Alice adds three items; Bob ticks the second; Alice's board says 1/3.
    for text in ("Outline", "Draft", "Review"):
        alices.get_by_test_id("checklist-new").fill(text)
        alices.get_by_test_id("checklist-new").press("Enter")
    expect(alices.locator("#checklist-items li")).to_have_count(3)
    items = bobs.locator("#checklist-items li")
    expect(items).to_have_count(3)
    items.nth(1).get_by_role("checkbox").check()
    expect(alice.plugin.get_by_test_id("checklist-c1")).to_have_text("1/3")
    expect(alices.get_by_test_id("checklist-progress")).to_have_text("1/3")
    bob.wait_for("boardDebug.state.pending === 0")
    alice.wait_for("boardDebug.state.pending === 0")
    card = stored(demo, "card:c1")
    assert [(i["text"], i["done"]) for i in card["checklist"]] == [
        ("Outline", False),
        ("Draft", True),
        ("Review", False),
    ]
    assert card["commentCount"] == 1
    [kept] = stored(demo, "comments:c1")
    assert (kept["author"], kept["text"]) == (
        "alice",
        "@bob please check https://example.com/spec. <b>not bold</b>",
    )

    # Carol reads the comment and the checklist; she can write neither.
    carols = open_card(carol, "c1")
    expect(carols.get_by_test_id("comments-list")).to_contain_text("@bob please check")
    expect(carols.get_by_test_id("comment-input")).to_be_hidden()
    expect(carols.get_by_test_id("checklist-new")).to_be_hidden()
    expect(carols.locator("#checklist-items input").nth(1)).to_be_checked()
    expect(carols.locator("#checklist-items input").nth(0)).to_be_disabled()
    refused = carol.frame.evaluate(
        """() => steamHarnessKanban.kv.updateValue("comments:c1", (list) => [
              ...(list || []), {id: "x1", author: "alice", text: "forged", at: ""}])
            .then(() => "written", (e) => e.code)"""
    )
    assert refused == "forbidden"
    # Nor may Bob, who writes, put other words in Alice's mouth: the server keeps her comment.
    rewritten = bob.frame.evaluate(
        """() => steamHarnessKanban.kv.updateValue("comments:c1", (list) =>
              list.map((c) => ({...c, text: "Approved, ship it."})))
            .then(() => "written", (e) => e.code)"""
    )
    assert rewritten == "forbidden"
    assert [c["text"] for c in stored(demo, "comments:c1")] == [kept["text"]]

    # Bob replies; Alice, an owner, may delete his comment, and he may edit his own.
    bobs.get_by_test_id("comment-input").fill("Done, see the draft")
    bobs.get_by_test_id("comment-post").click()
    replies = alices.get_by_test_id("comments-list").locator("li")
    expect(replies).to_have_count(2)
    expect(replies.nth(1).get_by_role("button", name="Delete")).to_be_visible()
    expect(replies.nth(1).get_by_role("button", name="Edit")).to_have_count(0)
    expect(carols.get_by_test_id("comments-list").locator("li")).to_have_count(2)
    expect(alice.plugin.get_by_test_id("comments-c1")).to_have_text("2")

    # From his dashboard's inbox, Bob follows the mention to the card's dialog; read now.
    bob.page.goto("/")
    mention = bob.page.get_by_test_id("notification")
    expect(mention).to_have_count(1)
    expect(mention).to_contain_text("mentioned you on “Write the onboarding guide”: @bob please")
    expect(mention).to_contain_text("Alice Martin · Board")
    mention.get_by_test_id("notification-open").click()
    expect(bob.plugin.locator("#card-dialog")).to_be_visible()
    expect(bob.plugin.locator("#card-title-input")).to_have_value("Write the onboarding guide")
    expect(bob.page.get_by_test_id("inbox-count")).to_have_attribute("data-unread", "0")


def test_a_comment_in_markdown_draws_safely_and_its_edit_gets_the_text_as_typed(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice = open_board("alice")
    dialog = open_card(alice, "c1")
    typed = (
        "**Ready** for review, @bob:\n"
        "- [the spec](https://example.com/spec)\n"
        "- [click me](javascript:window.pwned=1)\n\n"
        '<img src=x onerror="window.pwned=2">\n\n'
        "![pixel](https://example.com/pixel.png)"
    )
    dialog.get_by_test_id("comment-input").fill(typed)
    dialog.get_by_test_id("comment-post").click()

    comment = dialog.locator("#comments-list > li.comment")
    expect(comment).to_have_count(1)
    body = comment.locator(".markdown")
    expect(body.locator("strong")).to_have_text("Ready")
    expect(body.locator("ul > li")).to_have_count(2)
    expect(body.locator(".mention")).to_have_text("@bob")
    # Raw HTML is text; a javascript: link is text; an image is a link to it, never loaded.
    expect(body).to_contain_text('<img src=x onerror="window.pwned=2">')
    expect(body).to_contain_text("[click me](javascript:window.pwned=1)")
    expect(body.locator("img")).to_have_count(0)
    links = body.locator("a")
    expect(links).to_have_count(2)
    assert [links.nth(i).get_attribute("href") for i in range(2)] == [
        "https://example.com/spec",
        "https://example.com/pixel.png",
    ]
    for i in range(2):
        expect(links.nth(i)).to_have_attribute("target", "_blank")
        expect(links.nth(i)).to_have_attribute("rel", "noopener noreferrer")
    body.get_by_text("[click me]", exact=False).click()
    alice.page.wait_for_timeout(200)
    assert alice.frame.evaluate("() => window.pwned === undefined")
    alice.wait_for("boardDebug.state.pending === 0")
    [kept] = stored(demo, "comments:c1")
    assert kept["text"] == typed
    # Bob's inbox says it in words, without markdown's marks (sent once the comment is kept).
    deadline = time.monotonic() + 10
    while not (inbox := notifications_list(user=demo.people["bob"])["notifications"]):
        assert time.monotonic() < deadline, "no notification reached bob"
        alice.page.wait_for_timeout(100)
    assert [n["text"] for n in inbox] == [
        "mentioned you on “Write the onboarding guide”: Ready for review, @bob: the spec"
        ' click me <img src=x onerror="window.pwned=2"> pixel'
    ]

    # Her edit box gets the text as she typed it; what she saves is drawn again.
    comment.get_by_role("button", name="Edit").click()
    box = comment.get_by_label("Edit comment")
    expect(box).to_have_value(typed)
    box.fill("_Edited_: see `notes.md`")
    comment.get_by_role("button", name="Save").click()
    expect(comment.locator(".markdown em")).to_have_text("Edited")
    expect(comment.locator(".markdown code")).to_have_text("notes.md")
    expect(comment.locator("a")).to_have_count(0)


def test_a_link_to_a_card_opens_its_dialog_and_copy_link_gives_that_link(
    demo: Demo, open_board: Callable[..., Person], live_server: LiveServer
) -> None:
    alice = open_board("alice")
    dialog = open_card(alice, "c3")
    # A comment's link opens in a tab of its own, out of the plugin's sandbox.
    dialog.get_by_test_id("comment-input").fill(f"status: {live_server.url}/healthz")
    dialog.get_by_test_id("comment-post").click()
    with alice.page.context.expect_page() as opened:
        dialog.get_by_test_id("comments-list").locator("a").click()
    opened.value.wait_for_load_state()
    assert opened.value.url == f"{live_server.url}/healthz"
    assert opened.value.evaluate("() => window.opener") is None
    opened.value.close()

    dialog.get_by_test_id("copy-card-link").click()
    link = alice.page.evaluate("() => location.href") + "#card=c3"
    # Clipboard or not (a sandboxed frame may not write it), the link is the same.
    copied = dialog.get_by_test_id("card-link")
    expect(copied).to_have_value(link)

    carol = open_board("carol", fragment="#card=c3")
    expect(carol.plugin.locator("#card-dialog")).to_be_visible()
    expect(carol.plugin.locator("#card-title-input")).to_have_value("Fix the login redirect")

    # On the open board, a link to another card (only the fragment changes) opens that one.
    carol.page.evaluate("() => { location.hash = 'card=c1'; }")
    expect(carol.plugin.locator("#card-title-input")).to_have_value("Write the onboarding guide")
    carol.page.evaluate("() => { location.hash = 'card=nope'; }")
    expect(carol.plugin.locator(".toast").last).to_contain_text("not on this board")


def test_alices_dashboard_search_finds_a_card_on_another_board_and_opens_its_dialog(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice = demo.people["alice"]
    roadmap = a_board(owner=alice, name="Roadmap")
    board_data(
        roadmap,
        cards={"r1": {"title": "Beta launch", "rank": "i"}},
        comments={"r1": [{"id": "m1", "author": "bob", "text": "Needs the onboarding guide"}]},
    )
    person = open_board("alice")
    person.page.goto("/")
    person.page.get_by_label("Search boards and cards").fill("onboarding guide")
    person.page.get_by_label("Search boards and cards").press("Enter")
    results = person.page.get_by_test_id("card-result")
    expect(results).to_have_count(2)  # the demo Board's card by its title, Roadmap's by a comment
    expect(results.nth(1)).to_contain_text("Roadmap · in its comment: Needs the onboarding guide")
    results.nth(1).get_by_role("link").click()
    person.page.wait_for_url(f"**/boards/{roadmap.id}/#card=r1")
    expect(person.page.locator("#bridge-status")).to_have_text("Live")
    person.wait_for("window.boardDebug && boardDebug.state.loaded")
    expect(person.plugin.locator("#card-dialog")).to_be_visible()
    expect(person.plugin.locator("#card-title-input")).to_have_value("Beta launch")


#: The README's pictures of the card dialog and the inbox, under var/ unless
#: KANBAN_UPDATE_DOCS=1 asks to refresh docs/screenshots/ (as test_board.py's).
SHOTS = (
    Path(settings.BASE_DIR)
    / ("docs" if os.environ.get("KANBAN_UPDATE_DOCS") == "1" else "var")
    / "screenshots"
)


@pytest.mark.parametrize(
    ("viewport", "suffix"),
    [({"width": 1280, "height": 800}, ""), ({"width": 390, "height": 844}, "-phone")],
)
def test_the_card_dialog_and_the_inbox_for_the_readme(
    demo: Demo, open_board: Callable[..., Person], viewport: dict[str, int], suffix: str
) -> None:
    alice, bob = demo.people["alice"], demo.people["bob"]
    card = stored(demo, "card:c1")
    checklist = [
        {"id": "k1", "text": "Outline the first week", "done": True},
        {"id": "k2", "text": "Draft the accounts section", "done": False},
        {"id": "k3", "text": "Review with Carol", "done": False},
    ]
    comments = [
        {
            "id": "m1",
            "author": "alice",
            "text": "@bob please check the outline",
            "at": "2026-12-01T09:12:00Z",
        },
        {
            "id": "m2",
            "author": "bob",
            "text": "Looks good; notes in https://example.com/notes",
            "at": "2026-12-01T10:40:00Z",
        },
    ]
    for key, value, who in (
        (
            "card:c1",
            {**card, "assignees": ["alice", "bob"], "checklist": checklist, "commentCount": 2},
            bob,
        ),
        ("comments:c1", comments[:1], alice),  # each comment is its author's
        ("comments:c1", comments, bob),
    ):
        project_kv_set(
            target=Target(user=who, project_id=demo.board.id),
            key=key,
            value=value,
            provenance=Provenance(via="bridge"),
        )
    notification_send(
        actor=bob,
        project_id=demo.board.id,
        users=["alice"],
        text="assigned you “Write the onboarding guide”",
        card="c1",
        via="bridge",
    )
    person = open_board("alice", viewport=viewport)
    dialog = open_card(person, "c1")
    expect(dialog.get_by_test_id("comments-list").locator("li")).to_have_count(2)
    SHOTS.mkdir(parents=True, exist_ok=True)
    person.page.screenshot(path=str(SHOTS / f"card-dialog{suffix}.png"))
    dialog.locator("#card-activity-box summary").click()
    expect(dialog.get_by_test_id("card-activity").locator("li").first).to_be_visible()
    dialog.get_by_test_id("card-activity").locator("li").first.scroll_into_view_if_needed()
    person.page.screenshot(path=str(SHOTS / f"card-dialog-activity{suffix}.png"))
    dialog.locator("#card-cancel").click()
    person.page.goto("/")
    expect(person.page.get_by_test_id("notification")).to_have_count(1)
    person.page.screenshot(path=str(SHOTS / f"inbox{suffix}.png"))
    for name in ("card-dialog", "inbox"):
        assert (SHOTS / f"{name}{suffix}.png").stat().st_size < 300_000
