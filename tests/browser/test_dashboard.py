"""The dashboard as people start from it: alice makes a board in the browser, lets bob and
carol in from its members page, and each of them sees what their role allows. Nobody here
is staff, and nothing is set up on the server first but the three accounts."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import BrowserContext, Page, expect

from kanban.data.kv import project_kv_get
from kanban.data.target import Target
from kanban.models import Project
from tests.browser.helpers import log_in_by_cookie, screenshot
from tests.factories import a_user
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PLUGIN_URL = re.compile(r"/plugins/[0-9a-f-]+/index\.html$")
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def people(transactional_db: None) -> dict[str, User]:
    return {
        "alice": a_user("alice", first_name="Alice", last_name="Martin"),
        "bob": a_user("bob", first_name="Bob", last_name="Okafor"),
        "carol": a_user("carol", first_name="Carol", last_name="Diaz"),
    }


@pytest.fixture
def signed_in(
    people: dict[str, User], new_context: Callable[..., BrowserContext], live_server: LiveServer
) -> Callable[..., Page]:
    def sign_in(username: str, **options: Any) -> Page:
        context = new_context(base_url=live_server.url, **options)
        log_in_by_cookie(context, people[username], live_server.url)
        return context.new_page()

    return sign_in


def wait_in_plugin(page: Page, condition: str, timeout: float = 10.0) -> None:
    """Poll ``condition`` in the plugin frame (its CSP forbids wait_for_function's eval)."""
    deadline = time.monotonic() + timeout
    while True:
        frame = page.frame(url=PLUGIN_URL)
        if frame is not None and frame.evaluate(condition):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout} s: {condition}")
        page.wait_for_timeout(50)


def open_board_from_dashboard(page: Page, name: str) -> None:
    page.goto("/")
    page.get_by_role("link", name=name, exact=True).click()
    expect(page.locator("#bridge-status")).to_have_text("Live")
    wait_in_plugin(page, "window.boardDebug && boardDebug.state.loaded")


@pytest.mark.long
def test_alice_makes_a_board_lets_bob_and_carol_in_and_later_shows_carol_out(
    people: dict[str, User], signed_in: Callable[..., Page]
) -> None:
    alice = signed_in("alice")
    alice.goto("/")
    # A first-time dashboard offers to create a board straight away.
    alice.get_by_label("Name").fill("Launch plan")
    expect(alice.get_by_role("radio", name="Board")).to_be_checked()
    alice.get_by_role("button", name="Create board").click()
    expect(alice.locator("#bridge-status")).to_have_text("Live")
    wait_in_plugin(alice, "window.boardDebug && boardDebug.state.loaded")
    project = Project.objects.get(name="Launch plan")
    assert alice.url.endswith(f"/boards/{project.id}/")

    # Members, from the board's top bar, by keyboard-reachable form controls.
    alice.get_by_test_id("members-link").click()
    alice.get_by_label("Username").fill("bob")
    alice.get_by_label("Role", exact=True).select_option("developer")
    alice.get_by_role("button", name="Add member").click()
    expect(alice.get_by_role("status")).to_contain_text("bob")
    alice.get_by_label("Username").fill("carol")
    alice.get_by_label("Role", exact=True).select_option("guest")
    alice.get_by_label("Username").press("Enter")
    # Offered, not yet on it: each says yes in their own inbox.
    expect(alice.get_by_test_id("member")).to_have_count(1)
    expect(alice.get_by_test_id("offer")).to_have_count(2)
    expect(alice.get_by_test_id("offer").filter(has_text="carol")).to_contain_text("guest")

    # bob accepts in his inbox, lands on the board and adds a card.
    bob = signed_in("bob")
    bob.goto("/")
    expect(bob.get_by_test_id("inbox-count")).to_have_attribute("data-unread", "1")
    offer = bob.get_by_test_id("offer").filter(has_text="Launch plan")
    expect(offer).to_contain_text("developer")
    offer.get_by_role("button", name="Accept").click()
    expect(bob.locator("#bridge-status")).to_have_text("Live")
    bob.goto("/")
    tile = bob.get_by_test_id("tile").filter(has_text="Launch plan")
    expect(tile.get_by_test_id("tile-role")).to_have_text("developer")
    expect(tile.get_by_role("list", name="Members").get_by_role("listitem")).to_have_count(2)
    open_board_from_dashboard(bob, "Launch plan")
    plugin = bob.frame_locator("#plugin-frame")
    plugin.get_by_test_id("add-card-todo").click()
    plugin.get_by_test_id("quick-add-todo").fill("Book the venue")
    plugin.get_by_test_id("quick-add-todo").press("Enter")
    expect(plugin.get_by_test_id("card-title")).to_have_text(["Book the venue"])
    wait_in_plugin(bob, "boardDebug.state.pending === 0")
    index = project_kv_get(
        target=Target(user=people["alice"], project_id=project.id), key="board:cards"
    )
    assert index is not None and len(index.value) == 1

    # carol sees it, read-only; the members page shows her the list without the controls.
    carol = signed_in("carol")
    carol.goto("/")
    carol.get_by_test_id("offer").get_by_role("button", name="Accept").click()
    open_board_from_dashboard(carol, "Launch plan")
    carol_plugin = carol.frame_locator("#plugin-frame")
    expect(carol_plugin.get_by_test_id("card-title")).to_have_text(["Book the venue"])
    expect(carol_plugin.get_by_test_id("readonly-note")).to_be_visible()
    expect(carol_plugin.get_by_test_id("add-card-todo")).to_have_count(0)

    # alice removes carol; carol's open board loses access within a second.
    alice.reload()
    expect(alice.get_by_test_id("member")).to_have_count(3)
    alice.get_by_role("button", name="Remove Carol Diaz").click()
    expect(alice.get_by_test_id("member")).to_have_count(2)
    removed = time.monotonic()
    expect(carol.get_by_test_id("board-ended")).to_be_visible(timeout=1_000)
    print(f"carol's board ended {time.monotonic() - removed:.3f} s after the removal answered")
    expect(carol.get_by_test_id("board-ended")).to_contain_text("no longer have access")
    expect(carol.locator("#plugin-frame")).to_be_hidden()
    # Its configurations went with it: no New, Duplicate or picker on the ended board.
    expect(carol.locator("#config-picker")).to_be_hidden()
    carol.goto("/")
    expect(carol.get_by_test_id("tile")).to_have_count(0)

    # The tile tells alice what changed last, and who did it.
    alice.goto("/")
    tile = alice.get_by_test_id("tile").filter(has_text="Launch plan")
    expect(tile.get_by_test_id("tile-changed-by")).to_have_text("Bob Okafor")
    # The host pages' one date format: relative while it is recent.
    expect(tile.get_by_test_id("tile-changed")).to_contain_text(re.compile(r"just now|ago"))
    expect(tile.get_by_test_id("tile-role")).to_have_text("owner")


def test_a_guest_sees_the_members_but_no_controls_and_cannot_post_a_change(
    people: dict[str, User], signed_in: Callable[..., Page]
) -> None:
    alice = signed_in("alice")
    alice.goto("/")
    alice.get_by_label("Name").fill("Team")
    alice.get_by_role("button", name="Create board").click()
    expect(alice.locator("#bridge-status")).to_have_text("Live")
    project = Project.objects.get(name="Team")
    alice.goto(f"/boards/{project.id}/members/")
    alice.get_by_label("Username").fill("carol")
    alice.get_by_label("Role", exact=True).select_option("guest")
    alice.get_by_role("button", name="Add member").click()
    expect(alice.get_by_test_id("offer")).to_have_count(1)

    carol = signed_in("carol")
    carol.goto("/")
    carol.get_by_test_id("offer").get_by_role("button", name="Accept").click()
    expect(carol.locator("#bridge-status")).to_have_text("Live")
    carol.goto(f"/boards/{project.id}/members/")
    expect(carol.get_by_test_id("member")).to_have_count(2)
    expect(carol.get_by_role("button", name=re.compile("Remove"))).to_have_count(0)
    expect(carol.get_by_role("button", name="Add member")).to_have_count(0)
    # Posting the form anyway changes nothing: the server decides.
    token = carol.context.cookies()
    csrf = next((c["value"] for c in token if c["name"] == "csrftoken"), "")
    answer = carol.request.post(
        f"/boards/{project.id}/members/",
        form={"username": "carol", "role": "owner", "csrfmiddlewaretoken": csrf},
        headers={"Referer": carol.url, "X-CSRFToken": csrf},
    )
    assert answer.status == 400
    assert "needs the owner role" in answer.text()
    assert project.memberships.get(user=people["carol"]).role == "guest"

    # What she may do is leave: the board goes from her dashboard.
    carol.get_by_role("button", name="Leave board").click()
    expect(carol.get_by_test_id("left-status")).to_contain_text("Team")
    expect(carol.get_by_test_id("tile")).to_have_count(0)
    assert not project.memberships.filter(user=people["carol"]).exists()


def test_search_sort_and_the_archive_on_a_390_pixel_phone(
    people: dict[str, User], signed_in: Callable[..., Page]
) -> None:
    alice = signed_in("alice", viewport=PHONE)
    for name in ("Garden", "Kitchen", "Garage"):
        alice.goto("/")
        if not alice.get_by_label("Name").is_visible():
            alice.get_by_text("Create board", exact=True).first.click()
        alice.get_by_label("Name").fill(name)
        alice.get_by_role("radio", name="Blank plugin").check()
        alice.get_by_role("button", name="Create board").click()
        expect(alice.locator("#bridge-status")).to_have_text("Live")

    alice.goto("/")
    expect(alice.get_by_test_id("tile").locator("h2")).to_have_text(["Garage", "Garden", "Kitchen"])
    alice.get_by_label("Search boards").fill("gar")
    alice.get_by_label("Search boards").press("Enter")
    expect(alice.get_by_test_id("tile").locator("h2")).to_have_text(["Garage", "Garden"])
    assert alice.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(alice, "dashboard-phone")

    alice.get_by_role("button", name="Archive Garden").click()
    expect(alice.get_by_test_id("tile").locator("h2")).to_have_text(["Garage", "Kitchen"])
    alice.get_by_role("link", name="Archived boards").click()
    expect(alice.get_by_test_id("tile").locator("h2")).to_have_text(["Garden"])
    alice.get_by_role("button", name="Restore Garden").click()
    expect(alice.get_by_test_id("tile").locator("h2")).to_have_text(["Garage", "Garden", "Kitchen"])
    alice.get_by_label("Sort by").select_option("changed")
    alice.get_by_role("button", name="Show").click()
    expect(alice.get_by_label("Sort by")).to_have_value("changed")
    expect(alice.get_by_test_id("tile")).to_have_count(3)

    kitchen = Project.objects.get(name="Kitchen")
    alice.goto(f"/boards/{kitchen.id}/members/")
    assert alice.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(alice, "members-phone")


def test_alice_deletes_a_board_after_typing_its_name_and_bobs_open_board_ends(
    people: dict[str, User], signed_in: Callable[..., Page]
) -> None:
    from kanban.access.memberships import membership_set
    from kanban.projects.board_templates import board_create

    project = board_create(user=people["alice"], name="Old plans", template="board")
    membership_set(user=people["bob"], project=project, role="developer")
    bob = signed_in("bob")
    open_board_from_dashboard(bob, "Old plans")
    alice = signed_in("alice")
    alice.goto(f"/boards/{project.id}/members/")

    confirm = alice.get_by_label(re.compile("Type the board's name"))
    confirm.fill("old plans")  # not exactly its name: refused, nothing deleted
    alice.get_by_role("button", name="Delete board").click()
    expect(alice.get_by_test_id("delete-error")).to_contain_text("exactly")
    assert Project.objects.filter(pk=project.id).exists()

    alice.get_by_label(re.compile("Type the board's name")).fill("Old plans")
    alice.get_by_role("button", name="Delete board").click()
    expect(alice.get_by_test_id("deleted-status")).to_contain_text("Old plans")
    expect(alice.get_by_role("link", name="Old plans", exact=True)).to_have_count(0)
    assert not Project.objects.filter(pk=project.id).exists()
    expect(bob.get_by_test_id("board-ended")).to_be_visible(timeout=2_000)
