"""The card dialog as Trello and Planka taught people: two panes (the card on the left, what
to do with it on the right, each button a small popover), one pane on a phone; the board's
label set picked, created and renamed; dates in one format; a card moved or copied to
another board; all of it by keyboard, and nothing that would fail for a guest."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from kanban.data.target import Target
from kanban.models import Project
from tests.browser.demo_board import Demo, Person, demo, open_board
from tests.factories import a_board

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo", "open_board"]


def stored(board: Project, key: str, demo: Demo) -> Any:
    entry = project_kv_get(target=Target(user=demo.people["alice"], project_id=board.id), key=key)
    return None if entry is None else entry.value


def box(locator: Any) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None
    return found


def test_the_dialog_has_two_panes_on_a_desktop_and_one_on_a_phone(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    wide = open_board("alice", viewport={"width": 1280, "height": 900})
    wide.plugin.get_by_test_id("card-c1").dblclick()
    main, side = wide.plugin.locator(".card-main"), wide.plugin.locator(".card-side")
    expect(side).to_be_visible()
    assert box(side)["x"] > box(main)["x"] + box(main)["width"] - 1, "side by side"
    for name in ("Members", "Labels", "Dates", "Attachment", "Move", "Copy", "Archive"):
        expect(side.get_by_role("button", name=name, exact=True)).to_be_visible()
    # The demo board has its inventory: the item field is there.
    expect(wide.plugin.locator("#card-item-field")).to_be_visible()

    phone = open_board("alice", viewport={"width": 390, "height": 800})
    phone.plugin.get_by_test_id("card-c1").dblclick()
    side = phone.plugin.locator(".card-side")
    badges = phone.plugin.locator(".card-badges")
    description = phone.plugin.locator(".card-description-box")
    expect(side).to_be_visible()
    # One pane: the actions a row of buttons between the card's badges and its description.
    assert box(badges)["y"] + box(badges)["height"] <= box(side)["y"] + 1
    assert box(side)["y"] + box(side)["height"] <= box(description)["y"] + 1
    assert abs(box(side)["x"] - box(badges)["x"]) < 2
    assert box(phone.plugin.locator("#card-dialog"))["width"] <= 390


def test_alice_picks_and_creates_labels_of_the_boards_set_and_bob_renames_and_deletes_them(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    project_kv_set(
        target=Target(user=demo.people["alice"], project_id=demo.board.id),
        key="board:labels",
        value=[{"name": "bug", "color": "red"}, {"name": "docs", "color": "sky"}],
        provenance=Provenance(via="cli"),
    )
    alice, bob = open_board("alice"), open_board("bob")
    board = alice.plugin
    board.get_by_test_id("card-c1").dblclick()
    board.get_by_test_id("dialog-labels").click()
    picker = board.get_by_test_id("labels-picker")
    expect(picker.locator(".label")).to_have_text(["bug", "docs"])
    expect(picker.locator(".label").first).to_have_attribute("data-color", "red")
    expect(board.get_by_test_id("pick-label-docs")).to_be_checked()
    board.get_by_test_id("pick-label-bug").check()

    # A name the set has, in any case, is refused where it is typed; nothing is written.
    board.get_by_test_id("label-create-open").click()
    board.get_by_test_id("label-name").fill("Bug")
    board.get_by_test_id("label-save").click()
    expect(board.get_by_test_id("card-popover")).to_contain_text("already has a label Bug")
    board.get_by_test_id("label-name").fill("needs, review")
    board.get_by_test_id("label-save").click()
    expect(board.get_by_test_id("card-popover")).to_contain_text("cannot hold a comma")
    board.get_by_test_id("label-name").fill("design")
    board.get_by_test_id("swatch-purple").check()
    board.get_by_test_id("label-name").press("Enter")
    expect(board.get_by_test_id("pick-label-design")).to_be_checked()
    board.get_by_test_id("card-popover").press("Escape")
    board.get_by_test_id("card-save").click()
    alice.wait_for("boardDebug.state.pending === 0")
    assert stored(demo.board, "card:c1", demo)["labels"] == ["docs", "bug", "design"]

    # bob sees the new label in its colour, then renames "bug" to "defect" in orange: the set
    # and every card that carried it follow (c3 has "bug" from the demo).
    design = bob.plugin.get_by_test_id("card-c1").locator(".label", has_text="design")
    expect(design).to_have_attribute("data-color", "purple")
    bob.plugin.get_by_test_id("card-c5").dblclick()
    bob.plugin.get_by_test_id("dialog-labels").click()
    bob.plugin.get_by_test_id("edit-label-bug").click()
    bob.plugin.get_by_test_id("label-name").fill("defect")
    bob.plugin.get_by_test_id("swatch-orange").check()
    bob.plugin.get_by_test_id("label-save").click()
    expect(bob.plugin.get_by_test_id("pick-label-defect")).not_to_be_checked()
    bob.wait_for("boardDebug.state.pending === 0")
    assert stored(demo.board, "board:labels", demo) == [
        {"name": "defect", "color": "orange"},
        {"name": "docs", "color": "sky"},
        {"name": "design", "color": "purple"},
    ]
    assert stored(demo.board, "card:c3", demo)["labels"] == ["defect"]
    assert stored(demo.board, "card:c1", demo)["labels"] == ["docs", "defect", "design"]
    defect = board.get_by_test_id("card-c3").locator(".label", has_text="defect")
    expect(defect).to_have_attribute("data-color", "orange")

    # bob deletes "design": asked in the popover first, then gone from the set and from c1.
    bob.plugin.get_by_test_id("edit-label-design").click()
    bob.plugin.get_by_test_id("label-delete").click()
    asked = bob.plugin.get_by_test_id("card-popover")
    expect(asked).to_contain_text("from the card that carries it")
    bob.plugin.get_by_test_id("label-delete-confirm").click()
    expect(bob.plugin.get_by_test_id("pick-label-design")).to_have_count(0)
    bob.wait_for("boardDebug.state.pending === 0")
    assert [label["name"] for label in stored(demo.board, "board:labels", demo)] == [
        "defect",
        "docs",
    ]
    assert stored(demo.board, "card:c1", demo)["labels"] == ["docs", "defect"]
    expect(board.get_by_test_id("card-c1").locator(".label", has_text="design")).to_have_count(0)


def test_alice_sets_dates_and_reads_them_in_one_format_by_keyboard_alone(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice = open_board("alice")
    board = alice.plugin
    card = board.get_by_test_id("card-c1")
    card.focus()
    card.press("Enter")
    expect(board.locator("#card-dialog")).to_be_visible()
    dates = board.get_by_test_id("dialog-dates")
    dates.focus()
    dates.press("Enter")
    due = board.get_by_test_id("date-input-due")
    expect(board.get_by_test_id("date-input-start")).to_be_focused()
    in_two_days = datetime.date.today() + datetime.timedelta(days=2)
    due.fill(in_two_days.isoformat())
    # Tab stays in the popover: from its last control back to its first, its Close.
    popover = board.get_by_test_id("card-popover")
    done = popover.get_by_role("button", name="Done")
    done.focus()
    done.press("Tab")
    expect(popover.get_by_role("button", name="Close")).to_be_focused()
    popover.get_by_role("button", name="Close").press("Shift+Tab")
    expect(done).to_be_focused()
    done.press("Escape")
    expect(board.get_by_test_id("card-popover")).to_be_hidden()
    expect(dates).to_be_focused()
    expect(board.locator("#card-dialog")).to_be_visible()
    expect(board.get_by_test_id("date-due")).to_contain_text("in 2 days")
    board.get_by_test_id("card-title-input").press("Enter")  # Enter in the title saves
    alice.wait_for("boardDebug.state.pending === 0")
    assert stored(demo.board, "card:c1", demo)["due"] == in_two_days.isoformat()


def test_alice_copies_a_card_to_another_board_and_moves_one_there(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    ops = a_board(owner=demo.people["alice"], name="Ops")
    alice = open_board("alice")
    board = alice.plugin
    board.get_by_test_id("card-c1").dblclick()
    board.get_by_test_id("dialog-copy").click()
    board.get_by_test_id("transfer-board").select_option(label="Ops")
    board.get_by_test_id("transfer-column").select_option(label="Doing")
    board.get_by_test_id("transfer-copy").click()
    expect(board.locator("#card-dialog")).to_be_hidden()
    expect(board.get_by_test_id("toast").filter(has_text="Copied")).to_contain_text("to Ops")
    expect(board.get_by_test_id("card-c1")).to_be_visible()  # a copy leaves it here
    (copied,) = stored(ops, "board:cards", demo)
    assert stored(ops, f"card:{copied}", demo)["column"] == "doing"
    assert stored(ops, f"card:{copied}", demo)["title"] == "Write the onboarding guide"

    # Within this board, Move changes the column the dialog saves.
    board.get_by_test_id("card-c5").dblclick()
    board.get_by_test_id("dialog-move").click()
    board.get_by_test_id("transfer-column").select_option(label="Doing")
    board.get_by_test_id("transfer-move").click()
    expect(board.get_by_test_id("card-where")).to_contain_text("Doing")
    board.get_by_test_id("card-save").click()
    alice.wait_for("boardDebug.state.cards.find((c) => c.id === 'c5').column === 'doing'")

    # To another board, Move asks the server: the card leaves this board for Ops.
    board.get_by_test_id("card-c2").dblclick()
    board.get_by_test_id("dialog-move").click()
    board.get_by_test_id("transfer-board").select_option(label="Ops")
    board.get_by_test_id("transfer-move").click()
    expect(board.get_by_test_id("card-c2")).to_have_count(0)
    assert "c2" not in stored(demo.board, "board:cards", demo)
    assert len(stored(ops, "board:cards", demo)) == 2

    # On Ops, a new board, the dialog offers no inventory item at all.
    alice.page.goto(f"/boards/{ops.id}/")
    alice.wait_for("window.boardDebug && boardDebug.state.loaded")
    cards = board.locator("[data-card-id]")
    expect(cards).to_have_count(2)
    cards.first.dblclick()
    expect(board.locator("#card-dialog")).to_be_visible()
    expect(board.locator("#card-item-field")).to_be_hidden()
    expect(board.locator("#card-dialog").get_by_text("Inventory unavailable")).to_have_count(0)


def test_carol_the_guest_reads_the_card_and_may_copy_it_to_her_own_board_only(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    carol = open_board("carol")
    board = carol.plugin
    board.get_by_test_id("card-c1").dblclick()
    expect(board.locator("#card-dialog")).to_be_visible()
    expect(board.get_by_test_id("card-members").locator(".avatar")).to_have_count(1)
    for hidden in ("dialog-members", "dialog-labels", "dialog-dates", "dialog-move"):
        expect(board.get_by_test_id(hidden)).to_be_hidden()
    expect(board.get_by_test_id("dialog-archive")).to_be_hidden()
    expect(board.get_by_test_id("dialog-copy")).to_be_hidden()  # she writes no board
    expect(board.locator(".badge-add")).to_have_count(0)
    board.get_by_test_id("card-description-view").click()
    expect(board.get_by_test_id("card-description-input")).to_be_hidden()
    board.locator("#card-cancel").click()

    a_board(owner=demo.people["carol"], name="Carol's notes")
    carol.page.reload()
    carol.wait_for("window.boardDebug && boardDebug.state.loaded")
    board.get_by_test_id("card-c1").dblclick()
    expect(board.get_by_test_id("dialog-copy")).to_be_visible()
    board.get_by_test_id("dialog-copy").click()
    expect(board.get_by_test_id("transfer-board").locator("option")).to_have_text(["Carol's notes"])
