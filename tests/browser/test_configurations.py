"""A person switches named configurations (the board's views, behind its View menu), in
Chromium against a real daphne worker: the sandboxed plugin
(tests/browser/plugins/configuration_probe) sees each switch through the bridge without a
page reload, and the choice survives a reload."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import FrameLocator, Page, expect

from kanban.access.memberships import membership_set
from kanban.data.configurations import configuration_create
from kanban.models import Configuration, Project
from kanban.projects.packages import project_import
from tests.browser.helpers import login, screenshot
from tests.factories import a_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"
PROBE = Path(__file__).parent / "plugins" / "configuration_probe"
MARKER = "window.__sameDocument"


@pytest.fixture
def alice() -> User:
    return a_user("alice", password=PASSWORD)


@pytest.fixture
def board(alice: User) -> Project:
    """The probe plugin, imported as a package; alice is only a guest."""
    project = project_import(path=PROBE)
    membership_set(user=alice, project=project, role="guest")
    return project


def open_board(page: Page, board: Project) -> FrameLocator:
    page.goto(f"/boards/{board.id}/")
    expect(page.locator("#bridge-status")).to_have_text("Live")
    # The views are behind the bar's View menu, which names the active one.
    page.get_by_test_id("view-menu-button").click()
    expect(page.get_by_role("combobox", name="Views")).to_be_enabled()
    return page.frame_locator("#plugin-frame")


def expect_plugin_shows(
    plugin: FrameLocator, *, id: str | re.Pattern[str], name: str, values: str = "{}"
) -> None:
    expect(plugin.locator("#configuration-name")).to_have_text(name)
    expect(plugin.locator("#configuration-id")).to_have_text(id)
    expect(plugin.locator("#configuration-values")).to_have_text(values)


def mark_document(page: Page) -> None:
    """A mark that only the current document carries: a reload would wipe it."""
    page.evaluate(f"{MARKER} = true")


def same_document(page: Page) -> bool:
    return bool(page.evaluate(f"{MARKER} === true"))


def active_names(user: Any) -> list[str]:
    return list(
        Configuration.objects.filter(user=user, is_active=True).values_list("name", flat=True)
    )


def test_alice_creates_and_switches_configurations_without_a_reload(
    alice: User, board: Project, page: Page
) -> None:
    team = configuration_create(
        user=alice, project_id=board.id, name="Team", values={"wip": 3, "lanes": ["a", "b"]}
    )
    login(page, "alice", PASSWORD)
    plugin = open_board(page, board)
    picker = page.get_by_role("combobox", name="Views")
    expect_plugin_shows(plugin, id="default", name="Default")
    expect(picker.locator("option")).to_have_text(["Default", "Team"])
    mark_document(page)

    # New: a small dialog, Enter to confirm; the board switches to what it created.
    page.get_by_role("button", name="Save as new view").click()
    dialog = page.get_by_role("dialog", name="Save as new view")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_label("Name")).to_be_focused()
    dialog.get_by_label("Name").fill("Sprint 12")
    dialog.get_by_label("Name").press("Enter")
    expect(dialog).to_be_hidden()
    expect(picker.locator("option:checked")).to_have_text("Sprint 12")
    expect(picker.locator("option")).to_have_text(["Default", "Sprint 12", "Team"])
    (sprint,) = Configuration.objects.filter(user=alice, name="Sprint 12")
    expect_plugin_shows(plugin, id=str(sprint.id), name="Sprint 12")
    expect(plugin.locator("#configuration-changes")).to_have_text("1")
    assert active_names(alice) == ["Sprint 12"]

    # Switching with the select: the plugin gets each configuration with its values.
    picker.select_option(label="Team")
    expect_plugin_shows(plugin, id=str(team.id), name="Team", values='{"wip":3,"lanes":["a","b"]}')
    picker.select_option(label="Default")
    expect_plugin_shows(plugin, id="default", name="Default")
    picker.select_option(label="Sprint 12")
    expect_plugin_shows(plugin, id=str(sprint.id), name="Sprint 12")
    expect(plugin.locator("#configuration-changes")).to_have_text("4")
    expect(page.get_by_role("status").filter(has_text="Switched")).to_have_text(
        "Switched to Sprint 12."
    )
    assert same_document(page), "the page was reloaded"
    assert active_names(alice) == ["Sprint 12"]
    screenshot(page, "board-configurations")

    # A reload opens the board with the active configuration, from the server.
    page.reload()
    plugin = open_board(page, board)
    assert not same_document(page)
    expect(picker.locator("option:checked")).to_have_text("Sprint 12")
    expect_plugin_shows(plugin, id=str(sprint.id), name="Sprint 12")
    expect(plugin.locator("#configuration-changes")).to_have_text("0")


def test_rename_duplicate_and_delete_from_the_keyboard(
    alice: User, board: Project, page: Page
) -> None:
    login(page, "alice", PASSWORD)
    plugin = open_board(page, board)
    picker = page.get_by_role("combobox", name="Views")
    rename = page.get_by_role("button", name="Rename view")
    delete = page.get_by_role("button", name="Delete view")
    # The built-in default cannot be renamed or deleted.
    expect(rename).to_be_disabled()
    expect(delete).to_be_disabled()
    mark_document(page)

    # Tab order: the select, then Save as new view.
    picker.focus()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Save as new view")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog").get_by_label("Name")).to_be_focused()
    page.keyboard.type("Mine")
    page.keyboard.press("Enter")
    expect_plugin_shows(plugin, id=re.compile(r"^[0-9a-f-]{36}$"), name="Mine")
    expect(rename).to_be_enabled()
    # The dialog closes once the list is read again, a moment after the plugin has switched:
    # as a person would, wait for it (a key pressed before goes to the closing dialog).
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(page.get_by_role("button", name="Save as new view")).to_be_focused()

    # Escape leaves a dialog without changing anything and gives focus back.
    rename.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Rename view Mine")
    expect(dialog.get_by_label("Name")).to_have_value("Mine")
    expect(dialog.get_by_label("Name")).to_be_focused()
    page.keyboard.type("Ignored")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(rename).to_be_focused()
    expect(picker.locator("option:checked")).to_have_text("Mine")

    # A refused name keeps the dialog open with the server's reason.
    page.keyboard.press("Enter")
    name_field = dialog.get_by_label("Name")
    expect(name_field).to_be_focused()
    name_field.fill("Default")  # typing could race the dialog selecting its current text
    page.keyboard.press("Enter")
    expect(dialog.get_by_role("alert")).to_contain_text("built-in")
    expect(dialog.get_by_label("Name")).to_be_focused()
    screenshot(page, "board-configuration-rename")
    dialog.get_by_label("Name").fill("Ours")
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    expect(plugin.locator("#configuration-name")).to_have_text("Ours")
    expect(picker.locator("option")).to_have_text(["Default", "Ours"])

    # Duplicate with the automatic name, then switch to the copy.
    page.get_by_role("button", name="Duplicate").click()
    copy_dialog = page.get_by_role("dialog", name="Duplicate Ours")
    expect(copy_dialog.get_by_label("Name")).to_be_focused()
    page.keyboard.press("Enter")
    expect(copy_dialog).to_be_hidden()
    expect(picker.locator("option")).to_have_text(["Default", "Ours", "Ours (copy)"])
    expect(plugin.locator("#configuration-name")).to_have_text("Ours (copy)")

    # Deleting the active one falls back to the default, in the plugin too.
    delete.click()
    confirm = page.get_by_role("dialog", name="Delete view")
    expect(confirm).to_contain_text("Ours (copy)")
    expect(confirm.get_by_role("button", name="Cancel")).to_be_focused()
    confirm.get_by_role("button", name="Delete").click()
    expect(confirm).to_be_hidden()
    expect_plugin_shows(plugin, id="default", name="Default")
    expect(picker.locator("option")).to_have_text(["Default", "Ours"])
    expect(picker).to_be_focused()
    expect(delete).to_be_disabled()
    assert same_document(page)
    assert list(Configuration.objects.values_list("name", flat=True).order_by("name")) == ["Ours"]
    assert active_names(alice) == []
