"""A card's activity and its due date in the Board: the card dialog's Activity section lists
one entry per field a version changed (who, what, when and through what), from the card's
kept versions, and marks an agent's writes; Restore previews the fields a version would bring
back, ticked or not, and restores only the ticked ones through the dialog's own save (its
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
from kanban.data.target import Target
from tests.browser.demo_board import Demo, Person, demo, open_board
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo", "open_board"]


def stored_card(demo: Demo) -> Any:
    entry = project_kv_get(
        target=Target(user=demo.people["alice"], project_id=demo.board.id), key="card:c1"
    )
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
    # Newest first, one entry per field: the agent's write on top, the demo's first write of
    # the card last (a fresh database may keep more versions between them, so the test names
    # the ends, not a count).
    renamed, dated = activity.nth(0), activity.nth(1)
    for entry in (renamed, dated):
        expect(entry).to_contain_text("Bob Okafor")
        expect(entry).to_contain_text("agent")
        expect(entry).to_contain_text("via REST")
        expect(entry.get_by_role("button", name="Restore")).to_have_count(0)  # it is current
    expect(renamed).to_contain_text("renamed this card to Guide (agent draft)")
    expect(dated).to_contain_text("set the due date to")

    # Restore on the card's creation previews each field it would bring back, all ticked;
    # alice keeps the agent's due date and restores the title alone.
    expect(activity.last).to_contain_text("added this card to To do")
    activity.last.get_by_role("button", name="Restore").click()
    choices = dialog.get_by_test_id("restore-choices")
    expect(choices.locator("li")).to_have_count(2)
    expect(choices).to_contain_text("Title")
    expect(choices).to_contain_text("Guide (agent draft) → Write the onboarding guide")
    expect(choices).to_contain_text("Due date")
    expect(dialog.get_by_test_id("restore-field-title")).to_be_checked()
    dialog.get_by_test_id("restore-field-due").uncheck()
    assert stored_card(demo)["title"] == "Guide (agent draft)", "nothing is written unasked"
    dialog.get_by_test_id("restore-apply").click()
    alice.wait_for(
        "boardDebug.state.pending === 0 && "
        "boardDebug.state.cards.find((c) => c.id === 'c1').title === 'Write the onboarding guide'"
    )
    restored = stored_card(demo)
    assert restored["title"] == "Write the onboarding guide"
    assert restored["due"] == "2026-12-24", "the field alice left unticked stays"
    assert restored["column"] == card["column"], "fields the version shares stay"


def test_each_field_a_write_changed_is_its_own_entry_and_restore_brings_back_that_field(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice, bob = demo.people["alice"], demo.people["bob"]
    card = stored_card(demo)
    deploy = {"id": "k1", "text": "Deploy", "done": False}
    for who, value in (
        (alice, {**card, "checklist": [deploy], "labels": ["docs"]}),
        # One write of bob's: a tick, a move, a label and a due date.
        (
            bob,
            {
                **card,
                "checklist": [{**deploy, "done": True}],
                "column": "doing",
                "labels": ["docs", "urgent"],
                "due": "2026-12-24",
            },
        ),
    ):
        project_kv_set(
            target=Target(user=who, project_id=demo.board.id),
            key="card:c1",
            value=value,
            provenance=Provenance(via="bridge"),
        )
    person = open_board("alice")
    dialog = person.plugin
    dialog.get_by_test_id("card-c1").dblclick()
    dialog.locator("#card-activity-box summary").click()
    activity = dialog.get_by_test_id("card-activity").locator("li")
    expect(activity.nth(0)).to_contain_text("Bob Okafor moved this card from To do to Doing")
    texts = activity.evaluate_all("(items) => items.map((item) => item.textContent)")
    for said in (
        "Bob Okafor added the label urgent",
        "Bob Okafor set the due date to",
        "Bob Okafor ticked Deploy",
        "Alice Martin added Deploy to the checklist",
    ):
        assert any(said in text for text in texts), (said, texts)
    assert not any("via the board" in text and "changed" in text for text in texts[:4])

    # Restore on alice's entry: the preview ticks the checklist alone, the move stays.
    alices = activity.filter(has_text="added Deploy to the checklist")
    alices.get_by_role("button", name="Restore").click()
    expect(dialog.get_by_test_id("restore-field-checklist")).to_be_checked()
    for other in ("column", "labels", "due"):
        expect(dialog.get_by_test_id(f"restore-field-{other}")).not_to_be_checked()
    # Escape closes the preview alone; the focus is back on its Restore button.
    dialog.get_by_test_id("restore-field-checklist").press("Escape")
    expect(dialog.get_by_test_id("restore-choices")).to_have_count(0)
    expect(dialog.locator("#card-dialog")).to_be_visible()
    expect(alices.get_by_role("button", name="Restore")).to_be_focused()
    alices.get_by_role("button", name="Restore").press("Enter")
    dialog.get_by_test_id("restore-apply").click()
    person.wait_for(
        "boardDebug.state.pending === 0 && "
        "boardDebug.state.cards.find((c) => c.id === 'c1').checklist[0].done === false"
    )
    now = stored_card(demo)
    assert now["checklist"] == [deploy]
    assert (now["column"], now["labels"], now["due"]) == ("doing", ["docs", "urgent"], "2026-12-24")


def test_a_long_activity_shows_twenty_versions_and_older_ones_on_request(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    card = stored_card(demo)
    for n in range(1, 25):
        project_kv_set(
            target=Target(user=demo.people["bob"], project_id=demo.board.id),
            key="card:c1",
            value={**card, "title": f"Guide, draft {n}"},
            provenance=Provenance(via="bridge"),
        )
    alice = open_board("alice")
    dialog = alice.plugin
    dialog.get_by_test_id("card-c1").dblclick()
    dialog.locator("#card-activity-box summary").click()
    entries = dialog.get_by_test_id("card-activity").locator("li.activity-entry")
    expect(entries).to_have_count(20)
    expect(entries.first).to_contain_text("renamed this card to Guide, draft 24")
    dialog.get_by_test_id("activity-older").click()
    expect(entries.last).to_contain_text("added this card to To do")
    expect(entries.nth(20)).to_contain_text("renamed this card to Guide, draft 4")
    expect(dialog.get_by_test_id("activity-older")).to_have_count(0)


def test_alice_filters_the_board_to_cards_due_soon_and_to_overdue_ones(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    today = datetime.date.today()
    for card_id, days in (("c1", -2), ("c2", 3), ("c3", 30)):
        card = project_kv_get(
            target=Target(user=demo.people["alice"], project_id=demo.board.id),
            key=f"card:{card_id}",
        )
        assert card is not None
        project_kv_set(
            target=Target(user=demo.people["alice"], project_id=demo.board.id),
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
