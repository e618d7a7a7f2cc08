"""#38's acceptance in Chromium: a team moves in from Trello. alice uploads her board's export
on the dashboard, watches the job's progress, reads the report and opens the board it made:
its lists, cards, label colours, checklists and comments (under their original authors and
dates) are the export's. bob, on the same board, drags a screenshot onto a card; carol
(guest) sees its cover and downloads it; a stranger, and alice once she has left the board,
get nothing from the file's link."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from kanban.access.memberships import membership_set
from kanban.models import Project, Role
from tests.browser.demo_board import Person
from tests.browser.helpers import log_in_by_cookie
from tests.browser.test_board_attachments import cover_painted, drop_file, screenshot_png
from tests.factories import a_user
from tests.kanban.imports.trello_export import TrelloExport
from tests.kanban.jobs.conftest import run_worker
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def team_export() -> tuple[TrelloExport, dict[str, str]]:
    """alice's Trello board as Trello exports it: people who are users here and people who
    are not (one who left), a closed list, a closed card, a card moved between lists, labels
    in Trello's dark and light variants and one without a name, checklists, comments,
    custom fields, Unicode and emoji."""
    export = TrelloExport(name="Website relaunch 🚀")
    alice = export.member("alice", "Alice Liddell")
    bob = export.member("bob", "Bob Builder")
    dana = export.member("dana", "Dana Müller")
    erin = "5e0000000000000000000e17"  # left the board: only her comments name her
    backlog = export.trello_list("Backlog")
    doing = export.trello_list("In progress")
    done = export.trello_list("Done ✓")
    export.trello_list("Old ideas", closed=True)
    bug = export.label("Bug", "red_dark")
    design = export.label("Design", "purple")
    urgent = export.label("Urgent", "orange_light")
    unnamed = export.label("", "green")
    points = export.custom_field("Story points", "number")
    login = export.card(
        backlog,
        "Fix the login page 🐛",
        desc="Safari shows a blank page after login.",
        idLabels=[bug, urgent],
        idMembers=[bob],
        start="2024-03-01T09:00:00.000Z",
        due="2024-03-08T17:00:00.000Z",
        customFieldItems=[{"id": "cf1", "idCustomField": points, "value": {"number": "3"}}],
    )
    hero = export.card(doing, "Hero image für die Startseite", idLabels=[design, unnamed])
    export.card(done, "Pick a domain name", dueComplete=True, idMembers=[alice])
    export.card(backlog, "Dropped idea", closed=True)
    export.moved(hero, from_list=backlog)
    export.checklist(
        login,
        "Steps",
        [{"name": "Reproduce on Safari", "state": "complete"}, {"name": "Write a test"}],
    )
    export.comment(login, "I can reproduce it on iOS too.", by=bob, at="2024-03-02T10:15:00.000Z")
    export.comment(login, "Logs attached in Slack 👍", by=dana, at="2024-03-03T08:00:00.000Z")
    export.comment(
        login,
        "Was fine last week.",
        by=erin,
        at="2024-03-01T12:30:00.000Z",
        creator={"id": erin, "username": "erin", "fullName": "Erin Gone"},
    )
    cards = {c["name"]: c["id"] for c in export.board["cards"]}
    return export, cards


def signed_in(user: Any, new_context: Callable[..., BrowserContext], server: LiveServer) -> Page:
    context = new_context(base_url=server.url)
    log_in_by_cookie(context, user, server.url)
    return context.new_page()


def on_board(page: Page, board: Project) -> Person:
    if not page.url.endswith(f"/boards/{board.id}/"):
        page.goto(f"/boards/{board.id}/")
    expect(page.locator("#bridge-status")).to_have_text("Live")
    person = Person(page)
    person.wait_for("window.boardDebug && boardDebug.state.loaded")
    return person


@pytest.mark.long
def test_a_team_moves_in_from_trello(
    new_context: Callable[..., BrowserContext], live_server: LiveServer, tmp_path: Path
) -> None:
    alice, bob, carol, dave = (a_user(name) for name in ("alice", "bob", "carol", "dave"))
    export, cards = team_export()
    upload = tmp_path / "website-relaunch.json"
    upload.write_bytes(export.data())

    # alice uploads the export on the dashboard and watches its job.
    page = signed_in(alice, new_context, live_server)
    page.goto("/")
    page.get_by_test_id("import-trello").click()
    page.get_by_label("Trello export (JSON)").set_input_files(str(upload))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_test_id("job-status")).to_have_text("Waiting for a worker…")
    expect(page.get_by_test_id("job-progress")).to_have_attribute("value", "0")
    run_worker()
    expect(page.get_by_test_id("job-status")).to_have_text("Imported.", timeout=15_000)
    expect(page.get_by_test_id("job-progress")).to_have_attribute("value", "100")
    counts = page.get_by_test_id("job-counts")
    expect(counts).to_contain_text("cards: 4")
    expect(counts).to_contain_text("cards archived: 1")
    expect(page.get_by_test_id("job-kept")).to_be_visible()
    page.get_by_test_id("job-board").click()
    board = Project.objects.get(name="Website relaunch 🚀")
    expect(page).to_have_url(re.compile(rf"/boards/{board.id}/$"))

    # The board is the export's: open lists in order, cards in them, colours, the rest.
    a = on_board(page, board)
    expect(a.plugin.locator(".column-title")).to_have_text(["Backlog", "In progress", "Done ✓"])
    expect(a.plugin.locator(".column").nth(0).get_by_test_id("card-title")).to_have_text(
        ["Fix the login page 🐛"]
    )
    expect(a.plugin.locator(".column").nth(1).get_by_test_id("card-title")).to_have_text(
        ["Hero image für die Startseite"]
    )
    expect(a.plugin.get_by_test_id("archive-open")).to_have_text("Archive (1)")
    login, hero = cards["Fix the login page 🐛"], cards["Hero image für die Startseite"]
    face = a.plugin.get_by_test_id(f"card-{login}")
    expect(face.locator(".label")).to_have_text(["Bug", "Urgent"])
    expect(face.locator(".label", has_text="Bug")).to_have_attribute("data-color", "red")
    expect(face.locator(".label", has_text="Urgent")).to_have_attribute("data-color", "orange")
    design = a.plugin.get_by_test_id(f"card-{hero}").locator(".label", has_text="Design")
    expect(design).to_have_attribute("data-color", "purple")
    expect(a.plugin.get_by_test_id(f"checklist-{login}")).to_have_text("1/2")
    expect(a.plugin.get_by_test_id(f"comments-{login}")).to_have_text("3")
    expect(a.plugin.get_by_test_id(f"start-{login}")).to_have_text("Starts Mar 1, 2024")
    expect(a.plugin.get_by_test_id(f"due-{login}")).to_contain_text("Mar 8, 2024")

    face.dblclick()
    items = a.plugin.get_by_test_id("dialog-checklist").get_by_role("listitem")
    expect(items).to_contain_text(["Reproduce on Safari", "Write a test"])
    expect(items.first.get_by_role("checkbox")).to_be_checked()
    expect(a.plugin.get_by_test_id("dialog-custom-fields")).to_have_text("Story points3")
    comments = a.plugin.get_by_test_id("comments-list").get_by_role("listitem")
    expect(comments).to_have_count(3)
    # Oldest first, each under its author and with its Trello date.
    expect(comments.nth(0)).to_contain_text("Erin Gone")
    expect(comments.nth(1)).to_contain_text("bob")
    expect(comments.nth(1)).to_contain_text("I can reproduce it on iOS too.")
    expect(comments.nth(2)).to_contain_text("Dana Müller")
    dates = comments.locator("time")
    expect(dates.nth(0)).to_have_attribute("datetime", "2024-03-01T12:30:00.000Z")
    expect(dates.nth(1)).to_have_attribute("datetime", "2024-03-02T10:15:00.000Z")
    expect(dates.nth(2)).to_have_attribute("datetime", "2024-03-03T08:00:00.000Z")
    a.plugin.locator("#card-cancel").click()

    # alice hands the board to bob as a second owner and lets carol in as a guest.
    membership_set(user=bob, project=board, role=Role.OWNER)
    membership_set(user=carol, project=board, role=Role.GUEST)
    b = on_board(signed_in(bob, new_context, live_server), board)
    c = on_board(signed_in(carol, new_context, live_server), board)

    # bob drags a screenshot from his desktop onto the login card.
    png = screenshot_png()
    drop_file(
        b.frame, b.plugin.get_by_test_id(f"card-{login}"), "login-error.png", "image/png", png
    )
    for person in (b, c, a):
        cover_painted(person, login)

    # carol opens the card and downloads the file: the bytes bob dropped.
    c.plugin.get_by_test_id(f"card-{login}").dblclick()
    row = c.plugin.get_by_test_id("attachments-list").get_by_role("listitem")
    expect(row).to_contain_text("login-error.png")
    expect(c.plugin.get_by_test_id("attachment-pick")).to_be_hidden()
    link = row.get_by_role("link", name="Download")
    with c.page.expect_popup() as opened:
        link.click()
    tab = opened.value
    tab.wait_for_load_state()
    assert tab.evaluate("document.images.length && document.images[0].naturalWidth") == 320
    carols = tab.context.request.get(tab.url)
    assert carols.status == 200 and carols.body() == png

    # alice's own link, then alice leaves the board: the link gives her nothing any more.
    a.plugin.get_by_test_id(f"card-{login}").dblclick()
    alices_link = str(
        a.plugin.get_by_test_id("attachments-list").get_by_role("link").get_attribute("href")
    )
    assert page.context.request.get(alices_link).body() == png
    page.goto(f"/boards/{board.id}/members/")
    page.get_by_role("button", name="Leave board").click()
    expect(page).to_have_url(re.compile(r"\?left="))
    assert page.context.request.get(alices_link, max_redirects=0).status in (403, 404)

    # A stranger with a session of his own gets nothing from carol's link or alice's.
    stranger = signed_in(dave, new_context, live_server)
    for url in (tab.url, alices_link):
        assert stranger.context.request.get(url, max_redirects=0).status in (403, 404)
    # Nor does anyone without a session.
    anonymous = new_context(base_url=live_server.url)
    assert anonymous.request.get(tab.url, max_redirects=0).status in (401, 403, 404)
