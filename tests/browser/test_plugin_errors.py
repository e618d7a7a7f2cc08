"""A plugin that fails to start says why, on the board, instead of "…" forever."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, expect

from kanban.access.memberships import membership_set
from kanban.projects.packages import project_import
from tests.browser.boards import PLUGINS
from tests.browser.helpers import log_in_by_cookie
from tests.factories import a_user
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_syntax_error_in_a_plugin_shows_an_error_panel_with_the_console_message(
    new_context: Callable[..., BrowserContext], live_server: LiveServer
) -> None:
    broken = project_import(path=PLUGINS / "broken")
    alice = a_user("alice")
    membership_set(user=alice, project=broken, role="developer")
    context = new_context(base_url=live_server.url)
    log_in_by_cookie(context, alice, live_server.url)
    page = context.new_page()
    missing_icon: list[str] = []
    page.on("response", lambda r: missing_icon.append(r.url) if r.status == 404 else None)

    page.goto(f"/boards/{broken.id}/")

    panel = page.get_by_test_id("plugin-error")
    expect(panel).to_be_visible()
    expect(panel).to_contain_text("The plugin stopped with an error")
    expect(panel).to_contain_text("SyntaxError")
    expect(panel).to_contain_text("app.js:5")
    expect(page.frame_locator("#plugin-frame").locator("#state")).to_have_text("…")
    panel.get_by_role("button", name="Hide").click()
    expect(panel).to_be_hidden()
    assert missing_icon == [], "no 404s, the favicon's included"


def test_an_unhandled_rejection_shows_too_and_the_panel_clears_when_the_plugin_is_fixed(
    new_context: Callable[..., BrowserContext], live_server: LiveServer, tmp_path: Path
) -> None:
    """An SDK typo inside an async handler rejects a promise nobody catches: the board says
    so as for an uncaught error. Once the developer fixes it and it is imported again, the
    reloaded plugin starts with an empty panel, not the old error."""
    package = tmp_path / "async_broken"
    shutil.copytree(PLUGINS / "async_broken", package)
    broken = project_import(path=package)
    alice = a_user("alice")
    membership_set(user=alice, project=broken, role="developer")
    context = new_context(base_url=live_server.url)
    log_in_by_cookie(context, alice, live_server.url)
    page = context.new_page()
    page.goto(f"/boards/{broken.id}/")

    panel = page.get_by_test_id("plugin-error")
    expect(panel).to_be_visible()
    expect(panel).to_contain_text("Unhandled rejection")
    expect(panel).to_contain_text("getValu is not a function")
    # A re-import reaches the page as an event on its socket: one still opening misses it.
    expect(page.locator("#bridge-status")).to_have_text("Live")

    app = package / "app.js"
    app.write_text(app.read_text().replace("getValu(", "getValue("))
    project_import(path=package)  # as import_project --watch does after the save
    expect(page.frame_locator("#plugin-frame").locator("#state")).to_have_text(
        "started", timeout=10_000
    )
    expect(panel).to_be_hidden()
