"""Files on the Board's cards, and what a Trello import brings, in Chromium: bob drops a
screenshot on a card and it becomes the cover on everyone's board; a file attached in the
dialog is a row with its size and a download; carol (guest) sees and downloads but has no
upload or remove; a pasted screenshot uploads too. Label colours from ``board:labels``, a
card's start date and its custom fields show, and survive an edit of the card."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import FilePayload, Frame, Locator, expect

from kanban.data.kv import project_kv_get
from kanban.data.target import Target
from tests.browser.demo_board import Demo, Person, demo, open_board

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo", "open_board"]

#: A DataTransfer in the plugin's frame holding one file, as a drag from the desktop or a
#: paste of a screenshot carries it.
_FILES = """([name, type, b64]) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], name, { type }));
  return data;
}"""


def screenshot_png(width: int = 320, height: int = 200) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (40, 120, 200)).save(out, format="PNG")
    return out.getvalue()


def drop_file(frame: Frame, target: Locator, name: str, type_: str, data: bytes) -> None:
    """A real drop: dragenter, dragover and drop carrying the file, as the browser fires
    them when a file is dragged in from outside."""
    transfer = frame.evaluate_handle(_FILES, [name, type_, base64.b64encode(data).decode()])
    for event in ("dragenter", "dragover", "drop"):
        target.dispatch_event(event, {"dataTransfer": transfer})


def cover_painted(person: Person, card: str) -> None:
    """The card's cover is on its face and its picture decoded (naturalWidth > 0)."""
    expect(person.plugin.get_by_test_id(f"cover-{card}")).to_be_visible(timeout=10_000)
    person.wait_for(
        f"(() => {{ const img = document.querySelector('[data-testid=\"cover-{card}\"]');"
        " return Boolean(img && img.complete && img.naturalWidth > 0); })()"
    )


@pytest.mark.long
def test_a_screenshot_dropped_on_a_card_is_its_cover_for_everyone(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice, bob, carol = open_board("alice"), open_board("bob"), open_board("carol")

    drop_file(
        bob.frame, bob.plugin.get_by_test_id("card-c1"), "bug.png", "image/png", screenshot_png()
    )

    for person in (bob, alice, carol):
        cover_painted(person, "c1")
        expect(person.plugin.get_by_test_id("attachments-c1")).to_have_text("1")
    stored = project_kv_get(
        target=Target(user=demo.people["alice"], project_id=demo.board.id), key="attachments:c1"
    )
    assert stored is not None
    assert [item["name"] for item in stored.value["attachments"]] == ["bug.png"]

    # A board opened afterwards reads the cover with the cards.
    cover_painted(open_board("alice"), "c1")

    # carol opens the card: the file is there to download, nothing to add or remove.
    carol.plugin.get_by_test_id("card-c1").dblclick()
    row = carol.plugin.get_by_test_id("attachments-list").get_by_role("listitem")
    expect(row).to_contain_text("bug.png")
    expect(row.get_by_role("link", name="Download")).to_have_attribute("target", "_blank")
    expect(row.get_by_role("button", name="Remove bug.png")).to_have_count(0)
    expect(carol.plugin.get_by_test_id("attachment-pick")).to_be_hidden()


def test_files_in_the_dialog_are_rows_added_pasted_and_removed(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice, bob = open_board("alice"), open_board("bob")
    bob.plugin.get_by_test_id("card-c1").dblclick()
    dialog = bob.plugin.locator("#card-dialog")

    # A file picked with the dialog's button: a row with its name and size, no cover.
    bob.plugin.get_by_test_id("attachment-input").set_input_files(
        files=[FilePayload(name="notes.txt", mimeType="text/plain", buffer=b"x" * 2048)]
    )
    rows = bob.plugin.get_by_test_id("attachments-list").get_by_role("listitem")
    expect(rows).to_have_count(1, timeout=10_000)
    expect(rows.first).to_contain_text("notes.txt")
    expect(rows.first).to_contain_text("2.0 KB")
    expect(alice.plugin.get_by_test_id("attachments-c1")).to_have_text("1")
    expect(alice.plugin.get_by_test_id("cover-c1")).to_have_count(0)

    # A screenshot pasted into the dialog uploads, named for when it was pasted.
    transfer = bob.frame.evaluate_handle(
        _FILES, ["image.png", "image/png", base64.b64encode(screenshot_png()).decode()]
    )
    bob.frame.evaluate(
        "(data) => document.getElementById('card-dialog').dispatchEvent("
        "new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }))",
        transfer,
    )
    expect(rows).to_have_count(2, timeout=10_000)
    expect(rows.nth(1)).to_contain_text("Screenshot ")
    expect(alice.plugin.get_by_test_id("cover-c1")).to_be_visible(timeout=10_000)

    # A file dropped into the open dialog uploads as well.
    drop_file(bob.frame, dialog, "plan.pdf", "application/pdf", b"%PDF-1.4 plan")
    expect(rows).to_have_count(3, timeout=10_000)

    # alice downloads the PDF: its link opens a tab, which saves the file as it was dropped.
    alice.plugin.get_by_test_id("card-c1").dblclick()
    rows_seen = alice.plugin.get_by_test_id("attachments-list").get_by_role("listitem")
    pdf = rows_seen.filter(has_text="plan.pdf")
    # (Chromium reports a download that a tab started and closed on the page that opened it.)
    with alice.page.expect_download() as saved:
        pdf.get_by_role("link", name="Download").click()
    assert saved.value.suggested_filename == "plan.pdf"
    assert Path(saved.value.path()).read_bytes() == b"%PDF-1.4 plan"

    # bob removes the text file; alice's count follows.
    rows.first.get_by_role("button", name="Remove notes.txt").click()
    bob.plugin.get_by_test_id("confirm-ok").click()
    expect(rows).to_have_count(2)
    expect(alice.plugin.get_by_test_id("attachments-c1")).to_have_text("2")


def test_trello_label_colours_start_dates_and_custom_fields_show_and_survive_an_edit(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    alice = open_board("alice")
    alice.act(
        "await board.kanban.kv.setValue('board:labels', arg.labels);"
        "await board.kanban.kv.updateValue('card:c1', (card) => ({ ...card, trello: arg.trello }))",
        {
            "labels": [{"name": "Docs", "color": "sky"}, {"name": "bug", "color": "red"}],
            "trello": {
                "id": "5f1a",
                "start": "2024-03-01T09:00:00.000Z",
                "customFields": [
                    {"field": "Points", "type": "number", "value": "5"},
                    {"field": "Shipped", "type": "checkbox", "value": "true"},
                ],
            },
        },
    )
    bob = open_board("bob")
    for person in (alice, bob):
        chip = person.plugin.get_by_test_id("card-c1").locator(".label", has_text="docs")
        expect(chip).to_have_attribute("data-color", "sky")
        expect(chip).to_have_css("background-color", "rgb(108, 195, 224)")
        expect(person.plugin.get_by_test_id("start-c1")).to_have_text("Starts Mar 1, 2024")

    # A label the set does not name keeps its hashed colour.
    purchasing = alice.plugin.get_by_test_id("card-c2").locator(".label", has_text="purchasing")
    expect(purchasing).to_have_attribute("data-color", "")

    # bob picks one of the set's labels and creates another in the picker, in lime.
    board = bob.plugin
    board.get_by_test_id("card-c1").dblclick()
    expect(board.get_by_test_id("dialog-custom-fields")).to_have_text("Points5ShippedYes")
    board.get_by_test_id("dialog-labels").click()
    expect(board.get_by_test_id("pick-label-Docs")).to_be_checked()  # the card's "docs"
    board.get_by_test_id("pick-label-bug").check()
    board.get_by_test_id("label-create-open").click()
    board.get_by_test_id("label-name").fill("chore")
    board.get_by_test_id("swatch-lime").check()
    board.get_by_test_id("label-save").click()
    expect(board.get_by_test_id("pick-label-chore")).to_be_checked()
    board.get_by_test_id("pick-label-chore").press("Escape")
    expect(board.get_by_test_id("card-labels").locator(".label")).to_have_text(
        ["docs", "bug", "chore"]
    )
    board.get_by_test_id("card-save").click()
    chore = alice.plugin.get_by_test_id("card-c1").locator(".label", has_text="chore")
    expect(chore).to_have_attribute("data-color", "lime")

    bob.wait_for("boardDebug.state.pending === 0")
    stored: Any = project_kv_get(
        target=Target(user=demo.people["alice"], project_id=demo.board.id), key="card:c1"
    )
    assert stored.value["labels"] == ["docs", "bug", "chore"]
    assert stored.value["trello"]["customFields"][0]["field"] == "Points"
    labels = project_kv_get(
        target=Target(user=demo.people["alice"], project_id=demo.board.id), key="board:labels"
    )
    assert labels is not None and labels.value == [
        {"name": "Docs", "color": "sky"},
        {"name": "bug", "color": "red"},
        {"name": "chore", "color": "lime"},
    ]
