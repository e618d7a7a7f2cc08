"""A developer's first plugin, the way the README tells it: ``startplugin``, ``import_project``,
``membership``, open the board; the counter works for two people at once; and with
``import_project --watch`` an edit shows up on the open board by itself."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from django.core.management import call_command
from django.db import connections
from playwright.sync_api import BrowserContext, Frame, Page, expect

from kanban.data.kv import project_kv_get
from kanban.data.target import Target
from kanban.projects.packages import read_package
from kanban.projects.plugin_workflow import project_import_watch
from tests.browser.helpers import log_in_by_cookie
from tests.factories import a_user
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

T = TypeVar("T")


def plugin_frame(page: Page) -> Frame:
    found = page.frame(url=re.compile(r"/plugins/[0-9a-f-]+/index\.html$"))
    assert found is not None
    return found


def outside_the_browser_thread(work: Callable[[], T]) -> T:
    """Run ``work`` the way the command runs: in a thread with no event loop. (This one has
    Playwright's, and publishing to the channel layer refuses to run inside a loop.)"""
    results: list[T] = []

    def run() -> None:
        try:
            results.append(work())
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    assert results, "the watcher failed or hung"
    return results[0]


def test_a_new_plugin_renders_counts_for_two_people_and_reloads_after_an_edit(
    tmp_path: Path, new_context: Callable[..., BrowserContext], live_server: LiveServer
) -> None:
    alice = a_user("alice")
    bob = a_user("bob")
    folder = tmp_path / "counter"
    call_command("startplugin", "Team counter", str(folder))
    call_command("import_project", str(folder))
    project_id = read_package(folder).project_id
    call_command("membership", "alice", str(project_id), "developer")
    call_command("membership", "bob", str(project_id), "developer")

    pages = []
    for person in (alice, bob):
        context = new_context(base_url=live_server.url)
        log_in_by_cookie(context, person, live_server.url)
        page = context.new_page()
        page.goto(f"/boards/{project_id}/")
        expect(page.locator("#bridge-status")).to_have_text("Live")
        pages.append(page)
    alice_page = pages[0]
    alices, bobs = (page.frame_locator("#plugin-frame") for page in pages)
    expect(alices.get_by_role("heading")).to_have_text("Team counter")
    expect(alices.get_by_test_id("configuration")).to_have_text("Default")
    expect(alices.get_by_test_id("count")).to_have_text("0")

    alices.get_by_test_id("increment").click()
    alices.get_by_test_id("increment").click()
    expect(alices.get_by_test_id("count")).to_have_text("2")
    expect(bobs.get_by_test_id("count")).to_have_text("2")  # live, through subscribe
    bobs.get_by_test_id("increment").click()
    expect(alices.get_by_test_id("count")).to_have_text("3")
    entry = project_kv_get(target=Target(user=alice, project_id=project_id), key="counter")
    assert entry is not None and entry.value == 3

    # The developer keeps `import_project --watch` running and edits the page.
    plugin_frame(alice_page).evaluate("window.__before = true")
    alice_page.evaluate("window.__host = true")
    index = folder / "index.html"
    edited = index.read_text().replace("<h1>Team counter</h1>", "<h1>Team counter v2</h1>")
    attempts = outside_the_browser_thread(
        lambda: list(
            project_import_watch(path=folder, polls=1, wait=lambda _: index.write_text(edited))
        )
    )
    assert [attempt.error for attempt in attempts] == [None, None], "imported, then re-imported"

    for frame in (alices, bobs):
        expect(frame.get_by_role("heading")).to_have_text("Team counter v2")
        expect(frame.get_by_test_id("count")).to_have_text("3")
    assert plugin_frame(alice_page).evaluate("window.__before") is None, "a new document"
    assert alice_page.evaluate("window.__host") is True, "only the iframe reloads"
    # The reloaded plugins are connected again and still count together.
    bobs.get_by_test_id("increment").click()
    expect(alices.get_by_test_id("count")).to_have_text("4")
