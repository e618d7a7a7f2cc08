"""#26's acceptance, as a team lives it: alice (owner), bob (developer) and carol (guest) in
three browsers and bob's agent over MCP, on one Board. alice mentions bob, whose open page's
inbox count goes up; bob ticks a checklist item and alice sees 1/3; two assignees show on
the card; the agent retitles the card through board_cards and the activity says it was the
agent; alice restores her title; carol reads the comments and cannot write one; an invite
link makes dave a guest; alice's dashboard search finds a card on another board."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from playwright.sync_api import BrowserContext, expect

from kanban.access.memberships import membership_role
from kanban.data.kv import project_kv_get
from kanban.data.target import Target
from tests.browser.demo_board import Demo, Person, demo, open_board
from tests.browser.test_board_agents import in_thread, token
from tests.factories import a_board, board_data
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo", "open_board"]


def agent_call(server: LiveServer, plaintext: str, arguments: dict[str, Any]) -> Any:
    async def call() -> Any:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {plaintext}"})
        async with (
            http,
            Client(streamable_http_client(f"{server.url}/mcp/", http_client=http)) as client,
        ):
            result = await client.call_tool("board_cards", arguments)
            assert not result.is_error, result.content
            return json.loads(result.content[0].text)  # type: ignore[union-attr]

    return in_thread(lambda: asyncio.run(call()))


@pytest.mark.long
def test_a_team_and_an_agent_on_one_board(
    demo: Demo,
    open_board: Callable[..., Person],
    live_server: LiveServer,
    new_context: Callable[..., BrowserContext],
) -> None:
    alice, bob, carol = open_board("alice"), open_board("bob"), open_board("carol")
    board = alice.plugin

    # Two assignees, and a checklist of three.
    board.get_by_test_id("card-c1").dblclick()
    board.get_by_test_id("dialog-members").click()
    board.get_by_test_id("assign-bob").check()
    board.get_by_test_id("card-save").click()
    expect(board.get_by_test_id("assignee-c1").locator(".avatar")).to_have_count(2)
    expect(carol.plugin.get_by_test_id("assignee-c1").locator(".avatar")).to_have_count(2)
    board.get_by_test_id("card-c1").dblclick()
    for text in ("Outline", "Draft", "Review"):
        board.get_by_test_id("checklist-new").fill(text)
        board.get_by_test_id("checklist-add").click()
    expect(board.locator("#checklist-items li")).to_have_count(3)

    # "@bob please check": bob's open page hears it.
    board.get_by_test_id("comment-input").fill("@bob please check")
    board.get_by_test_id("comment-post").click()
    expect(bob.page.get_by_test_id("inbox-count")).to_have_attribute(
        "data-unread", "2"
    )  # + assigned
    board.locator("#card-cancel").click()

    # Bob ticks an item; alice's board says 1/3.
    bob.plugin.get_by_test_id("card-c1").dblclick()
    bob.plugin.locator("#checklist-items li").nth(0).get_by_role("checkbox").check()
    expect(board.get_by_test_id("checklist-c1")).to_have_text("1/3")

    # Bob's agent retitles the card; the activity marks it as the agent's; alice restores.
    card = agent_call(live_server, token("bob", demo.board.id), {"action": "get", "id": "c1"})
    agent_call(
        live_server,
        token("bob", demo.board.id),
        {"action": "update", "id": "c1", "title": "Guide (agent)", "revision": card["revision"]},
    )
    expect(board.get_by_test_id("card-c1").get_by_test_id("card-title")).to_have_text(
        "Guide (agent)"
    )
    board.get_by_test_id("card-c1").dblclick()
    board.locator("#card-activity-box summary").click()
    latest = board.get_by_test_id("card-activity").locator("li").first
    expect(latest).to_contain_text("Bob Okafor")
    expect(latest).to_contain_text("agent")
    expect(latest).to_contain_text("renamed this card to Guide (agent)")
    expect(latest).to_contain_text("via MCP")
    # Restore previews the version's fields; alice brings back the title alone.
    board.get_by_test_id("card-activity").locator("li").nth(1).get_by_role(
        "button", name="Restore"
    ).click()
    for box in board.get_by_test_id("restore-choices").locator("input").all():
        box.set_checked(box.get_attribute("value") == "title")
    board.get_by_test_id("restore-apply").click()
    expect(carol.plugin.get_by_test_id("card-c1").get_by_test_id("card-title")).to_have_text(
        "Write the onboarding guide"
    )

    # Carol reads the comment and has nowhere to write one.
    carol.plugin.get_by_test_id("card-c1").dblclick()
    expect(carol.plugin.get_by_test_id("comments-list")).to_contain_text("@bob please check")
    expect(carol.plugin.get_by_test_id("comment-input")).to_be_hidden()

    # An invite link makes dave a guest.
    alice.page.goto(f"/boards/{demo.board.id}/members/")
    alice.page.get_by_label("Invite as").select_option("guest")
    alice.page.get_by_test_id("invite-create").click()
    link = alice.page.get_by_test_id("invite-link").input_value()
    dave = new_context(base_url=live_server.url).new_page()
    dave.goto(link)
    dave.get_by_label("Choose a username").fill("dave")
    dave.get_by_label("Choose a password").fill("a long enough passphrase 7")
    dave.get_by_label("The same password again").fill("a long enough passphrase 7")
    dave.get_by_test_id("invite-sign-up").click()
    expect(dave.locator("#bridge-status")).to_have_text("Live")
    assert dave.url.endswith(f"/boards/{demo.board.id}/")
    dave_user = get_user_model().objects.get(username="dave")
    assert membership_role(user=dave_user, project=demo.board) == "guest"

    # Alice's dashboard search finds a card on another board and opens its dialog.
    roadmap = a_board(owner=demo.people["alice"], name="Roadmap")
    board_data(roadmap, cards={"r1": {"title": "Beta launch checklist"}})
    alice.page.goto("/?q=beta+launch")
    alice.page.get_by_test_id("card-result").get_by_role("link").click()
    alice.page.wait_for_url(f"**/boards/{roadmap.id}/#card=r1")
    expect(alice.plugin.locator("#card-title-input")).to_have_value("Beta launch checklist")
    stored = project_kv_get(
        target=Target(user=demo.people["alice"], project_id=demo.board.id), key="card:c1"
    )
    assert stored is not None and stored.value["title"] == "Write the onboarding guide"
