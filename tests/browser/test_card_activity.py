"""A card's activity and its due date in the Board: the card dialog's Activity section lists
who changed which field, when and through what, from the card's kept versions, and marks an agent's
writes; Restore brings an earlier version back through the dialog's own save (its
compare-and-set and conflict dialog, tested in test_board.py). The due filters show the cards
due soon (today to seven days on) or overdue."""

from __future__ import annotations

import datetime
import json
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from kanban.accounts.tokens import token_create
from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from tests.browser.demo_board import Demo, Person, demo, open_board
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo", "open_board"]


def stored_card(demo: Demo) -> Any:
    entry = project_kv_get(user=demo.people["alice"], project_id=demo.board.id, key="card:c1")
    assert entry is not None
    return entry.value


def test_alice_sees_an_agents_change_marked_in_the_activity_and_restores_her_version(
    demo: Demo, open_board: Callable[..., Person], live_server: LiveServer
) -> None:
    alice = open_board("alice")
    # Bob's agent, over REST with its run named, renames the card and gives it a due date.
    card = stored_card(demo)
    _, token = token_create(user=demo.people["bob"])
    request = urllib.request.Request(
        f"{live_server.url}/api/v1/projects/{demo.board.id}/kv/card:c1",
        data=json.dumps(
            {"value": {**card, "title": "Guide (agent draft)", "due": "2026-12-24"}}
        ).encode(),
        method="PUT",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "X-Run-Id": "run-7",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200
    alice.wait_for(
        "boardDebug.state.cards.find((c) => c.id === 'c1').title === 'Guide (agent draft)'"
    )

    dialog = alice.plugin
    dialog.get_by_test_id("card-c1").dblclick()
    expect(dialog.locator("#card-dialog")).to_be_visible()
    dialog.locator("#card-activity-box summary").click()
    activity = dialog.get_by_test_id("card-activity").locator("li")
    # Newest first: the agent's write on top, the demo's first write of the card last (a fresh
    # database may keep more versions between them, so the test names the ends, not a count).
    latest = activity.first
    expect(latest).to_contain_text("bob")
    expect(latest).to_contain_text("agent")
    expect(latest).to_contain_text("changed title, due date via REST")
    expect(latest.get_by_role("button", name="Restore")).to_have_count(0)  # it is current

    expect(activity.last).to_contain_text("created")
    activity.last.get_by_role("button", name="Restore").click()
    alice.wait_for(
        "boardDebug.state.pending === 0 && "
        "boardDebug.state.cards.find((c) => c.id === 'c1').title === 'Write the onboarding guide'"
    )
    restored = stored_card(demo)
    assert restored["title"] == "Write the onboarding guide"
    assert restored.get("due") is None
    assert restored["column"] == card["column"], "fields the version shares stay"


def test_alice_filters_the_board_to_cards_due_soon_and_to_overdue_ones(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    today = datetime.date.today()
    for card_id, days in (("c1", -2), ("c2", 3), ("c3", 30)):
        card = project_kv_get(
            user=demo.people["alice"], project_id=demo.board.id, key=f"card:{card_id}"
        )
        assert card is not None
        project_kv_set(
            user=demo.people["alice"],
            project_id=demo.board.id,
            key=f"card:{card_id}",
            value={**card.value, "due": (today + datetime.timedelta(days=days)).isoformat()},
            provenance=Provenance(via="api"),
        )
    alice = open_board("alice")
    board = alice.plugin

    def shown() -> list[str]:
        return sorted(
            board.locator("[data-testid^='card-c']").evaluate_all(
                "(cards) => cards.map((c) => c.dataset.testid)"
            )
        )

    expect(board.get_by_test_id("card-c3")).to_be_visible()  # loaded
    board.get_by_test_id("filter-due").select_option("overdue")
    expect(board.locator("[data-testid='card-c2']")).to_have_count(0)
    assert shown() == ["card-c1"]
    board.get_by_test_id("filter-due").select_option("soon")
    expect(board.locator("[data-testid='card-c1']")).to_have_count(0)
    assert shown() == ["card-c2"]
    board.locator("#filter-clear").click()
    expect(board.get_by_test_id("filter-due")).to_have_value("")
    expect(board.locator("[data-testid='card-c3']")).to_have_count(1)
