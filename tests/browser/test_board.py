"""The built-in Board and Inventory plugins on a real daphne worker, with the demo's people:
alice (owner), bob (developer) and carol (guest) on both projects, and the demo's cards.

Each person has their own browser profile; what they see is checked in the sandboxed
iframe, and what was stored is checked in the project's KV."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import FrameLocator, expect

from kanban.access.memberships import membership_set
from kanban.access.relationships import declarations_of, relationship_declare, relationship_remove
from kanban.data.configurations import configuration_active, configuration_create
from kanban.data.demo import STOCK
from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from kanban.data.target import Target
from kanban.web.avatars import avatar_hue
from tests.browser.demo_board import Demo, FrameLog, Person, demo, open_board
from tests.kanban.bridge.test_scale_out import redis_layer, redis_reachable
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo", "open_board", "redis_layer"]

#: The README's pictures. A test run must not rewrite tracked files: they go under var/ unless
#: ``KANBAN_UPDATE_DOCS=1`` asks to refresh docs/screenshots/.
README_SHOT = (
    Path(settings.BASE_DIR)
    / ("docs" if os.environ.get("KANBAN_UPDATE_DOCS") == "1" else "var")
    / "screenshots"
    / "board.png"
)
PHONE_SHOT = README_SHOT.with_name("board-phone.png")
#: Why a test that changes access here, in the test process, needs Redis: the change reaches
#: the worker through it, as an administrator's does from another process.
NEEDS_REDIS = "needs Redis between this process and the worker"


@pytest.fixture
def shared_server(
    live_servers: Callable[..., list[LiveServer]], redis_layer: dict[str, str]
) -> LiveServer:
    """A worker that hears this process' events (one Redis layer, a private prefix)."""
    (server,) = live_servers(1, env=redis_layer)
    return server


def stored(demo: Demo, key: str, *, project: str = "board") -> Any:
    entry = project_kv_get(
        target=Target(user=demo.people["alice"], project_id=getattr(demo, project).id), key=key
    )
    return None if entry is None else entry.value


def view(*, density: str = "comfortable", text: str = "") -> dict[str, Any]:
    return {
        "filter": {"text": text, "label": "", "assignee": "", "due": ""},
        "collapsed": [],
        "density": density,
    }


def visible_titles(person: Person) -> list[str]:
    return person.plugin.get_by_test_id("card-title").all_inner_texts()


# --- configurations ----------------------------------------------------------------------


def test_switching_configurations_in_the_picker_changes_the_boards_view_without_a_reload(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice = demo.people["alice"]
    configuration_create(
        user=alice,
        project_id=demo.board.id,
        name="Bolts",
        values={"view": view(density="compact", text="bolt")},
    )
    person = open_board("alice")
    person.page.evaluate("window.__sameHostPage = true")
    person.frame.evaluate("window.__sameFrame = true")
    expect(person.plugin.get_by_test_id("card-title")).to_have_count(5)
    expect(person.plugin.locator("body")).to_have_class(re.compile(r"\bdensity-comfortable\b"))

    person.page.get_by_test_id("view-menu-button").click()  # the views: the bar's View menu
    picker = person.page.get_by_role("combobox", name="Views")
    picker.select_option(label="Bolts")
    expect(person.plugin.locator("body")).to_have_class(re.compile(r"\bdensity-compact\b"))
    expect(person.plugin.get_by_test_id("filter-input")).to_have_value("bolt")
    expect(person.plugin.get_by_test_id("card-title")).to_have_text(["Order M6 bolts"])

    picker.select_option(label="Default")
    expect(person.plugin.locator("body")).to_have_class(re.compile(r"\bdensity-comfortable\b"))
    expect(person.plugin.get_by_test_id("card-title")).to_have_count(5)
    assert person.page.evaluate("window.__sameHostPage") is True
    assert person.frame.evaluate("window.__sameFrame") is True, "the plugin was reloaded"


def test_a_configuration_switch_reads_nothing_and_a_late_save_does_not_cross_it(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    """A configuration is the user's view of the same board: switching applies it at once,
    with no read of the board, and a view change still on its way lands where it was made."""
    alice = demo.people["alice"]
    configuration_create(
        user=alice,
        project_id=demo.board.id,
        name="Old",
        values={"view": view(density="compact", text="bolt")},
    )
    new = configuration_create(
        user=alice, project_id=demo.board.id, name="New", values={"view": view(text="login")}
    )
    log = FrameLog()
    person = open_board("alice", route=log.route)
    person.page.get_by_test_id("view-menu-button").click()  # the views: the bar's View menu
    picker = person.page.get_by_role("combobox", name="Views")
    picker.select_option(label="Old")
    expect(person.plugin.get_by_test_id("filter-input")).to_have_value("bolt")
    person.plugin.get_by_test_id("filter-input").fill("bolts and nuts")  # saved after 400 ms
    log.clear()
    picker.select_option(label="New")
    expect(person.plugin.get_by_test_id("filter-input")).to_have_value("login")
    expect(person.plugin.get_by_test_id("card-title")).to_have_text(["Fix the login redirect"])
    person.page.wait_for_timeout(600)
    assert log.reads() == [], "a switch reads nothing of the board"
    assert person.state()["view"] == view(text="login")
    expect(person.plugin.locator("body")).to_have_class(re.compile(r"\bdensity-comfortable\b"))
    assert configuration_active(user=alice, project_id=demo.board.id).id == new.id


def test_alice_and_bob_each_keep_their_own_view_of_the_default_configuration(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice = open_board("alice")
    alice.plugin.get_by_test_id("filter-input").fill("bolts")
    expect(alice.plugin.get_by_test_id("card-title")).to_have_text(["Order M6 bolts"])
    alice.wait_for("boardDebug.state.view.filter.text === 'bolts'")
    alice.page.wait_for_timeout(600)  # past the save's debounce

    bob = open_board("bob")
    expect(bob.plugin.get_by_test_id("card-title")).to_have_count(5)
    expect(bob.plugin.get_by_test_id("filter-input")).to_have_value("")
    carol = open_board("carol")  # a guest keeps a view of her own too
    carol.plugin.get_by_test_id("density-toggle").click()
    expect(carol.plugin.locator("body")).to_have_class(re.compile(r"\bdensity-compact\b"))
    carol.page.wait_for_timeout(600)

    again = open_board("alice")
    expect(again.plugin.get_by_test_id("filter-input")).to_have_value("bolts")
    expect(again.plugin.locator("body")).to_have_class(re.compile(r"\bdensity-comfortable\b"))
    stored_default = configuration_active(user=demo.people["alice"], project_id=demo.board.id)
    assert stored_default.id == "" and stored_default.values["view"]["filter"]["text"] == "bolts"
    assert configuration_active(user=demo.people["bob"], project_id=demo.board.id).values == {}
    carols = configuration_active(user=demo.people["carol"], project_id=demo.board.id)
    assert carols.values["view"]["density"] == "compact"


# --- people working together ------------------------------------------------------------------


def test_alice_and_bob_move_different_cards_of_one_column_at_once_and_both_moves_survive(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice, bob = open_board("alice"), open_board("bob")
    # Both pages press Alt+ArrowRight at the same instant, on different cards of "To do".
    at = time.time() * 1000 + 400
    alice.frame.evaluate(MOVE_RIGHT_AT, ["c1", at])
    bob.frame.evaluate(MOVE_RIGHT_AT, ["c2", at])

    for person in (alice, bob):
        person.wait_for(
            "['c1', 'c2'].every((id) => boardDebug.state.cards.find((c) => c.id === id).column"
            " === 'doing') && boardDebug.state.pending === 0"
        )
        expect(
            person.plugin.get_by_test_id("column-doing").get_by_test_id("card-c1")
        ).to_be_visible()
        expect(
            person.plugin.get_by_test_id("column-doing").get_by_test_id("card-c2")
        ).to_be_visible()
        expect(
            person.plugin.get_by_test_id("column-todo").get_by_test_id("card-title")
        ).to_have_count(0)
    assert stored(demo, "card:c1")["column"] == "doing"
    assert stored(demo, "card:c2")["column"] == "doing"
    assert stored(demo, "board:cards") == ["c1", "c2", "c3", "c4", "c5"]


def open_card(person: Person, card_id: str) -> FrameLocator:
    person.plugin.get_by_test_id(f"card-{card_id}").dblclick()
    expect(person.plugin.locator("#card-dialog")).to_be_visible()
    return person.plugin


def write_description(dialog: FrameLocator, text: str) -> None:
    """The dialog shows a description rendered; Edit turns it into its text."""
    edit = dialog.get_by_test_id("card-description-edit")
    if edit.is_visible():
        edit.click()
    dialog.get_by_test_id("card-description-input").fill(text)


def test_alice_and_bob_edit_different_fields_of_one_open_card_and_both_edits_survive(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice, bob = open_board("alice"), open_board("bob")
    bobs_dialog = open_card(bob, "c1")
    alices_dialog = open_card(alice, "c1")
    alices_dialog.locator("#card-title-input").fill("Write the onboarding guide, v2")
    alices_dialog.get_by_test_id("card-save").click()
    bob.wait_for("boardDebug.state.cards.find((c) => c.id === 'c1').title.endsWith('v2')")

    # Bob's dialog still shows the old title; he changes only the description.
    expect(bobs_dialog.locator("#card-title-input")).to_have_value("Write the onboarding guide")
    write_description(bobs_dialog, "Cover the bridge first.")
    bobs_dialog.get_by_test_id("card-save").click()

    for person in (alice, bob):
        person.wait_for(
            "boardDebug.state.pending === 0 && boardDebug.state.cards.find((c) => c.id === 'c1')"
            ".description === 'Cover the bridge first.'"
        )
        expect(person.plugin.get_by_test_id("card-c1")).to_contain_text("v2")
    card = stored(demo, "card:c1")
    assert card["title"] == "Write the onboarding guide, v2"
    assert card["description"] == "Cover the bridge first."
    expect(bob.plugin.get_by_test_id("conflict-dialog")).to_be_hidden()


@pytest.mark.parametrize("answer", ["mine", "theirs"])
def test_when_alice_and_bob_change_the_same_title_bob_is_asked_which_to_keep(
    answer: str, demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice, bob = open_board("alice"), open_board("bob")
    bobs_dialog = open_card(bob, "c1")
    alices_dialog = open_card(alice, "c1")
    alices_dialog.locator("#card-title-input").fill("Alice's title")
    alices_dialog.get_by_test_id("card-save").click()
    bob.wait_for("boardDebug.state.cards.find((c) => c.id === 'c1').title === \"Alice's title\"")

    bobs_dialog.locator("#card-title-input").fill("Bob's title")
    write_description(bobs_dialog, "Bob's notes")
    bobs_dialog.get_by_test_id("card-save").click()
    conflict = bob.plugin.get_by_test_id("conflict-dialog")
    expect(conflict).to_be_visible()
    expect(conflict).to_contain_text("Title")
    expect(conflict).to_contain_text("Theirs: Alice's title")
    expect(conflict).to_contain_text("Yours: Bob's title")
    assert stored(demo, "card:c1")["title"] == "Alice's title", (
        "nothing is written before Bob decides"
    )

    bob.plugin.get_by_test_id(f"conflict-{answer}").click()
    expect(conflict).to_be_hidden()
    title = "Bob's title" if answer == "mine" else "Alice's title"
    for person in (alice, bob):
        person.wait_for(
            "boardDebug.state.pending === 0 && boardDebug.state.cards.find((c) => c.id === 'c1')"
            f".title === {json.dumps(title)}"
        )
    card = stored(demo, "card:c1")
    assert card["title"] == title
    assert card["description"] == "Bob's notes", "the field only Bob changed lands either way"


#: Press Alt+ArrowRight on a card at a given time (ms since the epoch; one clock for all pages).
MOVE_RIGHT_AT = """([id, at]) => {
  const card = document.querySelector('[data-testid="card-' + id + '"]');
  const key = {key: "ArrowRight", altKey: true, bubbles: true};
  const press = () => card.dispatchEvent(new KeyboardEvent("keydown", key));
  setTimeout(press, Math.max(0, at - Date.now()));
}"""


def test_carol_the_guest_sees_the_board_without_editing_controls_and_cannot_change_it(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    carol = open_board("carol")
    expect(carol.plugin.get_by_test_id("card-title")).to_have_count(5)
    # Read-only from the start: the plugin knows her role (getContext), nothing to lose.
    expect(carol.plugin.get_by_test_id("readonly-note")).to_be_visible()
    expect(carol.plugin.get_by_test_id("readonly-note")).to_contain_text("Read only")
    expect(carol.plugin.get_by_test_id("add-card-todo")).to_have_count(0)
    assert carol.frame.evaluate("steamHarnessKanban.getContext().role") == "guest"

    carol.plugin.get_by_test_id("card-c1").press("Alt+ArrowRight")
    # She opens a card to read it: nothing in its dialog changes it.
    carol.plugin.get_by_test_id("card-c1").dblclick()
    dialog = carol.plugin.locator("#card-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#card-title-input")).to_be_disabled()
    expect(dialog.get_by_test_id("card-save")).to_be_hidden()
    expect(dialog.get_by_test_id("dialog-archive")).to_be_hidden()
    expect(dialog.get_by_test_id("comment-input")).to_be_hidden()
    expect(dialog.get_by_test_id("checklist-new")).to_be_hidden()
    # No pickers, moves or "+" buttons: what the card has shows, nothing opens to change it.
    for control in ("dialog-members", "dialog-labels", "dialog-move"):
        expect(dialog.get_by_test_id(control)).to_be_hidden()
    expect(dialog.locator(".badge-add")).to_have_count(0)
    expect(dialog.get_by_test_id("card-description-edit")).to_be_hidden()
    dialog.locator("#card-cancel").click()
    expect(dialog).to_be_hidden()

    console: list[str] = []
    carol.page.on("console", lambda message: console.append(message.text))
    forced = carol.frame.evaluate(
        """() => steamHarnessKanban.kv.setValue("card:c1", {id: "c1", title: "Mine now"})
              .then(() => "written", (err) => err.code)"""
    )
    # The server decides, whatever a plugin does; the SDK tells the developer why.
    assert forced == "forbidden"
    assert any(line.startswith("steamHarnessKanban: forbidden: ") for line in console), console
    assert stored(demo, "card:c1")["title"] == "Write the onboarding guide"
    assert stored(demo, "card:c1")["column"] == "todo"


@pytest.mark.redis
@pytest.mark.skipif(not redis_reachable(), reason=NEEDS_REDIS)
def test_carol_gains_the_editing_controls_live_when_alice_makes_her_a_developer(
    demo: Demo, open_board: Callable[..., Person], shared_server: LiveServer
) -> None:
    carol = open_board("carol", server=shared_server)
    expect(carol.plugin.get_by_test_id("add-card-todo")).to_have_count(0)

    membership_set(user=demo.people["carol"], project=demo.board, role="developer")

    expect(carol.plugin.get_by_test_id("readonly-note")).to_be_hidden()
    expect(carol.plugin.get_by_test_id("add-card-todo")).to_be_visible()
    carol.plugin.get_by_test_id("card-c1").press("Alt+ArrowRight")
    carol.wait_for("boardDebug.state.cards.find((c) => c.id === 'c1').column === 'doing'")
    carol.wait_for("boardDebug.state.pending === 0")
    assert stored(demo, "card:c1")["column"] == "doing"

    membership_set(user=demo.people["carol"], project=demo.board, role="guest")
    expect(carol.plugin.get_by_test_id("readonly-note")).to_be_visible()
    expect(carol.plugin.get_by_test_id("add-card-todo")).to_have_count(0)


@pytest.mark.redis
@pytest.mark.skipif(not redis_reachable(), reason=NEEDS_REDIS)
def test_a_pending_inventory_recovers_on_the_open_board_once_it_declares_the_board_back(
    demo: Demo, open_board: Callable[..., Person], shared_server: LiveServer
) -> None:
    (back,) = [d for d in declarations_of(demo.inventory) if d.alias == "board"]
    relationship_remove(project=demo.inventory, alias="board")
    alice = open_board("alice", server=shared_server)
    expect(alice.plugin.get_by_test_id("stock-c2")).to_have_text("Inventory unavailable")
    assert (
        alice.frame.evaluate(
            "steamHarnessKanban.relatedProjects.get('inventory').getContext().status"
        )
        == "pending"
    )

    relationship_declare(
        project=demo.inventory, alias="board", project_id=demo.board.id, grant=back.grant
    )

    expect(alice.plugin.get_by_test_id("stock-c2")).to_have_text("M6 bolt: 120 in stock")
    # And live from then on: a stock change shows without a reload.
    project_kv_set(
        target=Target(user=demo.people["alice"], project_id=demo.inventory.id),
        key="stock:bolt-m6",
        value={"name": "M6 bolt", "count": 119},
        provenance=Provenance(via="rest"),
    )
    expect(alice.plugin.get_by_test_id("stock-c2")).to_have_text("M6 bolt: 119 in stock")


def test_alice_and_bob_each_use_fifty_bolts_at_once_and_the_count_is_exact(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    start = STOCK["bolt-m6"][1]
    alice, bob = open_board("alice"), open_board("bob")
    for person in (alice, bob):
        person.frame.evaluate(USE_FIFTY)
    for person in (alice, bob):
        person.wait_for("window.__used !== undefined", timeout=30)
        assert person.frame.evaluate("window.__used") == {"ok": 50, "failed": []}
    assert stored(demo, "stock:bolt-m6", project="inventory") == {
        "name": "M6 bolt",
        "count": start - 100,
    }
    for person in (alice, bob):
        expect(person.plugin.get_by_test_id("stock-c2")).to_have_text(
            f"M6 bolt: {start - 100} in stock"
        )


#: Fifty concurrent decrements of the Inventory's M6 bolts; ``window.__used`` tells how it went.
USE_FIFTY = """() => {
  const inventory = steamHarnessKanban.relatedProjects.get("inventory");
  const less = (stock) => ({...stock, count: stock.count - 1});
  const useOne = () => inventory.kv.updateValue("stock:bolt-m6", less);
  Promise.allSettled(Array.from({length: 50}, useOne)).then((results) => {
    window.__used = {
      ok: results.filter((r) => r.status === "fulfilled").length,
      failed: results.filter((r) => r.status === "rejected").map((r) => r.reason.code),
    };
  });
}"""


def test_the_populated_board_for_the_readme(demo: Demo, open_board: Callable[..., Person]) -> None:
    alice = open_board("alice")
    expect(alice.plugin.get_by_test_id("stock-c2")).to_have_text("M6 bolt: 120 in stock")
    expect(alice.plugin.get_by_test_id("stock-c4")).to_have_text("Shelf bracket: 8 in stock")
    assert alice.page.viewport_size == {"width": 1280, "height": 800}
    README_SHOT.parent.mkdir(parents=True, exist_ok=True)
    alice.page.screenshot(path=str(README_SHOT), full_page=False)
    assert README_SHOT.stat().st_size < 300_000, "keep the README's picture small"


def test_on_a_390_pixel_phone_every_top_bar_control_is_on_screen(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice = open_board("alice", viewport={"width": 390, "height": 844})
    page = alice.page
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    controls = page.locator("header.top").locator("a, button, select")
    assert controls.count() >= 7  # brand, views, their four actions, appearance, Log out
    for index in range(controls.count()):
        control = controls.nth(index)
        if not control.is_visible():
            continue
        box = control.bounding_box()
        assert box is not None
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, control.evaluate(
            "e => e.outerHTML"
        )
    expect(alice.plugin.get_by_test_id("card-title").first).to_be_visible()
    # The first card shows in the top third of the screen: the configurations and the
    # board's filters fold into menus of their own.
    frame = page.locator("#plugin-frame").bounding_box()
    card = alice.plugin.locator(".card").first.bounding_box()
    assert frame is not None and card is not None
    page.screenshot(path=str(PHONE_SHOT), full_page=False)
    assert frame["y"] + card["y"] <= 844 / 3, f"first card at {frame['y'] + card['y']:.0f} px"
    page.get_by_test_id("menu-toggle").click()
    page.locator("#config-select").click(trial=True)
    page.get_by_role("button", name="Log out").click(trial=True)
    alice.plugin.get_by_test_id("toolbar-toggle").click()
    alice.plugin.locator("#filter-text").click(trial=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert PHONE_SHOT.stat().st_size < 300_000


def test_alice_assigns_a_card_to_bob_and_carol_from_the_members_and_old_free_text_names_still_show(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    project_kv_set(
        target=Target(user=demo.people["alice"], project_id=demo.board.id),
        key="card:c3",
        # A card from before several assignees: its one assignee, in free text.
        value={
            **{k: v for k, v in stored(demo, "card:c3").items() if k != "assignees"},
            "assignee": "Dana from the agency",
        },
        provenance=Provenance(via="cli"),
    )
    alice = open_board("alice")
    expect(alice.plugin.get_by_test_id("assignee-c1")).to_have_text("AMAlice Martin")
    expect(alice.plugin.get_by_test_id("assignee-c3")).to_contain_text("Dana from the agency")

    dialog = open_card(alice, "c1")
    # The members picker: each member's avatar and name, ticked when on the card.
    dialog.get_by_test_id("dialog-members").click()
    people = dialog.get_by_test_id("members-picker")
    names = people.locator(".pick-name")
    assert names.all_inner_texts() == ["Alice Martin", "Bob Okafor", "Carol Diaz"]
    assert people.locator(".avatar").all_inner_texts() == ["AM", "BO", "CD"]
    expect(dialog.get_by_test_id("assign-alice")).to_be_checked()
    dialog.get_by_test_id("assign-alice").uncheck()
    dialog.get_by_test_id("assign-bob").check()
    dialog.get_by_test_id("assign-carol").check()
    # Esc closes the picker alone, the focus back on its button; the dialog shows the faces.
    dialog.get_by_test_id("assign-carol").press("Escape")
    expect(people).to_have_count(0)
    expect(dialog.get_by_test_id("dialog-members")).to_be_focused()
    expect(dialog.get_by_test_id("card-members").locator(".avatar")).to_have_count(2)
    # One colour per person: the same hue as the card face and the host pages give bob.
    assert dialog.get_by_test_id("member-bob").evaluate(
        "(node) => node.style.getPropertyValue('--hue')"
    ) == str(avatar_hue("bob"))
    dialog.get_by_test_id("card-save").click()
    face = alice.plugin.get_by_test_id("assignee-c1")
    expect(face.locator(".avatar")).to_have_count(2)
    expect(face).to_have_attribute("title", "Assigned to Bob Okafor, Carol Diaz")
    alice.wait_for("boardDebug.state.pending === 0")
    card = stored(demo, "card:c1")
    assert (card["assignees"], card["assignee"]) == (["bob", "carol"], "bob")

    dialog = open_card(alice, "c3")
    dialog.get_by_test_id("dialog-members").click()
    expect(dialog.get_by_test_id("assign-Dana from the agency")).to_be_checked()
    assert "Dana from the agency (not a member)" in names.all_inner_texts()
    dialog.get_by_test_id("dialog-members").press("Escape")

    # Carol's view: "Assigned to me" shows c1, which she now shares with Bob.
    dialog.locator("#card-cancel").click()
    carol = open_board("carol")
    carol.plugin.locator("#filter-assignee").select_option(label="Assigned to me")
    expect(carol.plugin.get_by_test_id("card-c2")).to_have_count(0)  # Bob's alone
    expect(carol.plugin.get_by_test_id("card-c1")).to_be_visible()
    for title in carol.plugin.locator("[data-card-id] .assignee").evaluate_all(
        "(faces) => faces.map((face) => face.title)"
    ):
        assert "Carol Diaz" in title


def test_bob_deletes_a_card_and_undoes_it_and_a_move_and_an_edit_undo_too(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    bob = open_board("bob")
    card = bob.plugin.get_by_test_id("card-c3")
    card.focus()
    card.press("Delete")
    expect(bob.plugin.get_by_test_id("card-c3")).to_have_count(0)
    bob.wait_for("boardDebug.state.pending === 0")
    assert stored(demo, "card:c3")["archived"] is True
    expect(bob.plugin.get_by_test_id("archive-open")).to_have_text("Archive (1)")

    # The toast sits in the live region the plugin kit made, the page having none.
    expect(
        bob.plugin.locator("#toasts[aria-live=assertive]").get_by_test_id("toast")
    ).not_to_have_count(0)
    bob.plugin.get_by_test_id("toast").filter(has_text="Archived").get_by_test_id(
        "toast-action"
    ).click()
    expect(bob.plugin.get_by_test_id("card-c3")).to_be_visible()
    bob.wait_for("boardDebug.state.pending === 0")
    assert stored(demo, "card:c3")["archived"] is False
    assert stored(demo, "card:c3")["title"] == "Fix the login redirect"

    bob.plugin.get_by_test_id("card-c3").press("Alt+ArrowRight")
    bob.wait_for("boardDebug.state.cards.find((c) => c.id === 'c3').column === 'done'")
    bob.plugin.get_by_test_id("card-c3").press("Control+z")
    bob.wait_for("boardDebug.state.cards.find((c) => c.id === 'c3').column === 'doing'")
    bob.wait_for("boardDebug.state.pending === 0")
    assert stored(demo, "card:c3")["column"] == "doing"

    dialog = open_card(bob, "c3")
    dialog.locator("#card-title-input").fill("Fix the login redirect, for real")
    dialog.get_by_test_id("card-save").click()
    bob.wait_for("boardDebug.state.pending === 0")
    bob.plugin.get_by_test_id("card-c3").press("Control+z")
    bob.wait_for(
        "boardDebug.state.cards.find((c) => c.id === 'c3').title === 'Fix the login redirect'"
    )
    bob.wait_for("boardDebug.state.pending === 0")
    assert stored(demo, "card:c3")["title"] == "Fix the login redirect"

    # The archive restores too, after the toast is gone.
    bob.plugin.get_by_test_id("card-c3").press("Delete")
    bob.plugin.get_by_test_id("archive-open").click()
    bob.plugin.get_by_test_id("archived-c3").get_by_role("button", name="Restore").click()
    expect(bob.plugin.get_by_test_id("card-c3")).to_be_visible()
    bob.wait_for("boardDebug.state.pending === 0")
    assert stored(demo, "card:c3")["archived"] is False


def column_ids(person: Person, column: str) -> list[str]:
    return list(
        person.frame.evaluate(
            f"[...document.querySelectorAll('[data-testid=\"column-{column}\"] [data-card-id]')]"
            ".map((e) => e.dataset.cardId)"
        )
    )


def test_a_demo_card_moves_between_two_others_by_keyboard_and_by_drag(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice = open_board("alice")
    assert column_ids(alice, "doing") == ["c3", "c4"]

    card = alice.plugin.get_by_test_id("card-c1")
    card.focus()
    card.press("Alt+ArrowRight")
    alice.wait_for("boardDebug.state.cards.find((c) => c.id === 'c1').column === 'doing'")
    while column_ids(alice, "doing") != ["c3", "c1", "c4"]:
        position = column_ids(alice, "doing").index("c1")
        alice.plugin.get_by_test_id("card-c1").press(
            "Alt+ArrowDown" if position == 0 else "Alt+ArrowUp"
        )
        alice.wait_for("boardDebug.state.pending === 0")
    alice.wait_for("boardDebug.state.pending === 0")
    # The page carries no live regions: the plugin kit made one and speaks each move there.
    announcer = alice.plugin.locator("#announcer[role=status][aria-live=polite]")
    expect(announcer).to_have_count(1)
    expect(announcer).to_contain_text("Moved")
    ranks = [stored(demo, f"card:{card}")["rank"] for card in ("c3", "c1", "c4")]
    assert ranks == sorted(ranks) and len(set(ranks)) == 3

    # Dropped on c4's upper half: c2 lands right above it, after c1.
    alice.plugin.get_by_test_id("card-c2").drag_to(
        alice.plugin.get_by_test_id("card-c4"), target_position={"x": 20, "y": 4}
    )
    alice.wait_for("boardDebug.state.cards.find((c) => c.id === 'c2').column === 'doing'")
    alice.wait_for("boardDebug.state.pending === 0")
    assert column_ids(alice, "doing") == ["c3", "c1", "c2", "c4"]
    ranks = [stored(demo, f"card:{card}")["rank"] for card in ("c3", "c1", "c2", "c4")]
    assert ranks == sorted(ranks)


def test_alice_reorders_columns_by_keyboard_and_by_drag(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice = open_board("alice")
    alice.plugin.get_by_test_id("grip-done").focus()
    alice.plugin.get_by_test_id("grip-done").press("Alt+ArrowLeft")
    alice.wait_for("boardDebug.state.pending === 0")
    assert [c["id"] for c in stored(demo, "board:columns")] == ["todo", "done", "doing"]
    assert alice.frame.evaluate("document.activeElement.dataset.testid") == "grip-done"

    alice.plugin.get_by_test_id("grip-todo").drag_to(
        alice.plugin.get_by_test_id("column-doing").locator("header")
    )
    alice.wait_for("boardDebug.state.columns[2].id === 'todo'")
    alice.wait_for("boardDebug.state.pending === 0")
    assert [c["id"] for c in stored(demo, "board:columns")] == ["done", "doing", "todo"]
