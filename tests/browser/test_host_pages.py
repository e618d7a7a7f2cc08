"""The host pages around the Board, in Chromium against a real daphne worker: the board's one
top bar (it never wraps from 768 px up, its views behind a View menu in everyday words), one
avatar colour per person, board colours on the tiles, the dashboard's inbox list kept live,
dark mode (the device's, and the person's own choice kept on the server) and a phone's
dashboard. The tests write the host pages' screenshots to docs/screenshots/."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import (
    BrowserContext,
    FloatRect,
    Page,
    ViewportSize,
    expect,
)
from playwright.sync_api import (
    Error as PlaywrightError,
)

from kanban.models import Project
from kanban.projects.appearance import BOARD_COLORS, board_color
from kanban.web.avatars import avatar_hue
from tests.browser.helpers import log_in_by_cookie
from tests.factories import a_board, a_user
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(settings.BASE_DIR) / "docs" / "screenshots"
PHONE: ViewportSize = {"width": 390, "height": 844}
DARK_BACKGROUND = "rgb(15, 20, 25)"
LIGHT_BACKGROUND = "rgb(246, 247, 249)"
#: A long name, as teams give them: it is what gives way in the bar.
LONG_NAME = "Quarterly planning for the platform and infrastructure team"


@pytest.fixture
def people(transactional_db: None) -> dict[str, Any]:
    return {
        "alice": a_user("alice", first_name="Alice", last_name="Martin", staff=True),
        "bob": a_user("bob", first_name="Bob", last_name="Okafor"),
        "carol": a_user("carol", first_name="Carol", last_name="Diaz"),
        "dave": a_user("dave", first_name="Dave", last_name="Lindqvist"),
        "erin": a_user("erin", first_name="Erin", last_name="Moreau"),
    }


@pytest.fixture
def board(people: dict[str, Any]) -> Project:
    others = {people[name]: "developer" for name in ("bob", "carol", "dave", "erin")}
    return a_board(owner=people["alice"], name=LONG_NAME, members=others)


@pytest.fixture
def signed_in(
    people: dict[str, Any], new_context: Callable[..., BrowserContext], live_server: LiveServer
) -> Callable[..., Page]:
    def sign_in(username: str, **options: Any) -> Page:
        context = new_context(base_url=live_server.url, **options)
        log_in_by_cookie(context, people[username], live_server.url)
        return context.new_page()

    return sign_in


def open_board(page: Page, project: Project) -> None:
    page.goto(f"/boards/{project.id}/")
    expect(page.locator("#bridge-status")).to_have_text("Live")


def box(page: Page, selector: str) -> FloatRect:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not drawn"
    return found


def background(page: Page) -> str:
    return str(page.evaluate("getComputedStyle(document.body).backgroundColor"))


def plugin_prefers_dark(page: Page) -> bool:
    """The rule bridge_js/README.md gives plugin authors: the page's ?colorScheme= when the
    person chose one, else the frame's prefers-color-scheme (the device's). Asked again
    while the frame is between documents (a new choice reloads it)."""
    rule = (
        "(new URLSearchParams(location.search).get('colorScheme')"
        " || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'))"
        " === 'dark'"
    )
    deadline = time.monotonic() + 10
    while True:
        frame = page.frame(url=lambda url: "/plugins/" in url)
        try:
            assert frame is not None
            return bool(frame.evaluate(rule))
        except (AssertionError, PlaywrightError):
            if time.monotonic() > deadline:
                raise
            page.wait_for_timeout(50)


def shoot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)
    assert (SHOTS / f"{name}.png").stat().st_size < 300_000, "keep the docs' pictures small"


@pytest.mark.parametrize("width", [768, 1000, 1280])
def test_the_board_bar_is_one_row_with_log_out_on_it_from_768_pixels_up(
    width: int, board: Project, signed_in: Callable[..., Page]
) -> None:
    # alice is staff (an Admin link more), the board has a long name and five members.
    page = signed_in("alice", viewport={"width": width, "height": 800})
    open_board(page, board)
    brand, log_out = box(page, "header.top .brand"), box(page, "header.top form.logout button")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    bar = box(page, "header.top")
    assert bar["height"] <= 60, f"the bar is {bar['height']} px high at {width} px"
    # On the brand's row, and on the screen.
    assert abs((log_out["y"] + log_out["height"] / 2) - (brand["y"] + brand["height"] / 2)) < 8
    assert log_out["x"] + log_out["width"] <= width
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    for control in ("#config-picker summary", "[data-testid=members-link]", "#inbox-count"):
        drawn = box(page, control)
        assert drawn["y"] < bar["y"] + bar["height"] and drawn["x"] + drawn["width"] <= width
    # The long name is the part that gives way, and says so with an ellipsis.
    name = page.get_by_test_id("board-name").locator(".name")
    expect(name).to_have_attribute("title", LONG_NAME)
    if width == 1280:
        shoot(page, "host-board")


def test_alice_saves_renames_and_switches_views_from_the_view_menu(
    board: Project, signed_in: Callable[..., Page]
) -> None:
    page = signed_in("alice", viewport={"width": 1000, "height": 800})
    open_board(page, board)
    menu = page.get_by_test_id("view-menu-button")
    expect(menu).to_have_text("View: Default")
    menu.click()
    views = page.get_by_role("combobox", name="Views")
    expect(views).to_be_enabled()

    page.get_by_role("button", name="Save as new view").click()
    dialog = page.get_by_role("dialog", name="Save as new view")
    dialog.get_by_label("Name").fill("My cards")
    dialog.get_by_label("Name").press("Enter")
    expect(menu).to_have_text("View: My cards")
    expect(views.locator("option")).to_have_text(["Default", "My cards"])
    shoot(page, "host-view-menu")

    page.get_by_role("button", name="Rename view").click()
    rename = page.get_by_role("dialog", name="Rename view My cards")
    rename.get_by_label("Name").fill("Mine")
    rename.get_by_role("button", name="Rename").click()
    expect(menu).to_have_text("View: Mine")

    views.select_option(label="Default")
    expect(menu).to_have_text("View: Default")
    # Escape closes the menu and gives focus back to its button.
    page.keyboard.press("Escape")
    expect(views).to_be_hidden()
    expect(menu).to_be_focused()
    page.reload()
    expect(page.get_by_test_id("view-menu-button")).to_have_text("View: Default")
    page.get_by_test_id("view-menu-button").click()
    expect(page.get_by_role("combobox", name="Views").locator("option")).to_have_text(
        ["Default", "Mine"]
    )


def test_a_person_has_one_avatar_colour_on_the_dashboard_the_members_page_and_the_board(
    people: dict[str, Any], board: Project, signed_in: Callable[..., Page]
) -> None:
    page = signed_in("alice")
    expected = f"hsl({avatar_hue('bob')} 55% 48%)"

    def colour_of(face: str) -> str:
        return str(page.locator(face).first.evaluate("e => getComputedStyle(e).backgroundColor"))

    page.goto("/")
    on_dashboard = colour_of("[data-testid=tile] [data-testid=avatar-bob]")
    page.goto(f"/boards/{board.id}/members/")
    on_members = colour_of("[data-testid=member] [data-testid=avatar-bob]")
    open_board(page, board)
    on_bar = colour_of("header.top [data-testid=avatar-bob]")
    drawn = page.evaluate(
        "c => { const e = document.createElement('i'); e.style.color = c;"
        " document.body.append(e); return getComputedStyle(e).color; }",
        expected,
    )
    assert on_dashboard == on_members == on_bar == drawn


def test_an_owner_picks_the_board_colour_and_its_tile_wears_it(
    board: Project, signed_in: Callable[..., Page]
) -> None:
    page = signed_in("alice")
    page.goto("/")
    tile = page.get_by_test_id("tile").filter(has_text=LONG_NAME)
    default = BOARD_COLORS[board_color(board)]
    expect(tile).to_have_attribute("style", f"--board-color: {default}")

    page.get_by_role("link", name=f"Members of {LONG_NAME}").click()
    page.get_by_test_id("board-color").get_by_label("purple").check()
    page.get_by_test_id("board-color-save").click()
    expect(page.get_by_test_id("board-color").get_by_role("status")).to_have_text(
        "Saved the board's colour."
    )
    page.goto("/")
    purple = tile.evaluate("e => getComputedStyle(e).borderTopColor")
    assert purple == "rgb(122, 90, 248)"  # #7a5af8
    open_board(page, board)
    dot = page.locator(".board-dot").evaluate("e => getComputedStyle(e).backgroundColor")
    assert dot == purple


def test_dark_mode_follows_the_device_and_the_persons_own_choice_reaches_the_plugin(
    board: Project, signed_in: Callable[..., Page]
) -> None:
    # The device prefers dark: host pages and the plugin's frame are dark, nothing chosen.
    dark = signed_in("bob", color_scheme="dark")
    dark.goto("/")
    assert background(dark) == DARK_BACKGROUND
    open_board(dark, board)
    assert background(dark) == DARK_BACKGROUND
    assert plugin_prefers_dark(dark)
    shoot(dark, "host-board-dark")
    dark.goto("/")
    shoot(dark, "host-dashboard-dark")

    # carol's device prefers light; she chooses Dark in her menu, on the board.
    light = signed_in("carol", color_scheme="light")
    open_board(light, board)
    assert background(light) == LIGHT_BACKGROUND
    assert not plugin_prefers_dark(light)
    light.get_by_test_id("account-menu").locator("summary").click()
    light.get_by_test_id("scheme-dark").click()
    expect(light.get_by_test_id("scheme-dark")).to_have_attribute("aria-pressed", "true")
    expect(light.locator("html")).to_have_attribute("data-theme", "dark")
    assert background(light) == DARK_BACKGROUND
    # Her open board's plugin starts again, told.
    expect(light.locator("#plugin-frame")).to_have_attribute(
        "src", re.compile(r"\?colorScheme=dark$")
    )
    expect(light.locator("#bridge-status")).to_have_text("Live")
    assert plugin_prefers_dark(light)
    # Kept for her on the server: the next page, and the plugin's frame, are dark.
    light.reload()
    expect(light.locator("#bridge-status")).to_have_text("Live")
    assert background(light) == DARK_BACKGROUND
    assert plugin_prefers_dark(light)
    # And Light wins over a device that prefers dark.
    light.get_by_test_id("account-menu").locator("summary").click()
    light.get_by_test_id("scheme-light").click()
    expect(light.locator("html")).to_have_attribute("data-theme", "light")
    dark_device = signed_in("carol", color_scheme="dark")
    dark_device.goto("/")
    assert background(dark_device) == LIGHT_BACKGROUND


def test_bob_sees_new_offers_land_in_his_open_dashboard_inbox(
    people: dict[str, Any], signed_in: Callable[..., Page]
) -> None:
    a_board(owner=people["alice"], name="Launch plan")
    a_board(owner=people["alice"], name="Hiring")
    bob = signed_in("bob")
    bob.goto("/")
    expect(bob.get_by_test_id("offer")).to_have_count(0)
    # The socket is open once the count says so.
    expect(bob.get_by_test_id("inbox-count")).to_have_attribute("data-unread", "0")

    alice = signed_in("alice")
    for name in ("Launch plan", "Hiring"):
        alice.goto("/")
        alice.get_by_role("link", name=f"Members of {name}").click()
        alice.get_by_label("Username").fill("bob")
        offered = time.monotonic()
        alice.get_by_role("button", name="Add member").click()
        offer = bob.get_by_test_id("offer").filter(has_text=name)
        expect(offer).to_be_visible(timeout=5_000)
        print(f"{name}: in bob's open inbox {time.monotonic() - offered:.3f} s after the offer")
    expect(bob.get_by_test_id("inbox-count")).to_have_attribute("data-unread", "2")
    expect(bob.get_by_test_id("offer")).to_have_count(2)
    # What the list draws works as the page's own did: accepting opens the board.
    bob.get_by_role("button", name="Accept the board Hiring").click()
    expect(bob.locator("#bridge-status")).to_have_text("Live")


def test_on_a_phone_the_first_board_is_above_the_fold(
    people: dict[str, Any], board: Project, signed_in: Callable[..., Page]
) -> None:
    for name in ("Launch plan", "Hiring", "Office move"):
        a_board(owner=people["alice"], name=name)
    page = signed_in("alice", viewport=PHONE)
    page.goto("/")
    first = box(page, "[data-testid=tile]")
    assert first["y"] + first["height"] <= PHONE["height"], f"first tile ends at {first}"
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shoot(page, "host-dashboard-phone")
    page.set_viewport_size({"width": 1280, "height": 800})
    shoot(page, "host-dashboard")
    open_board(page, board)
    page.set_viewport_size(PHONE)
    shoot(page, "host-board-phone")
