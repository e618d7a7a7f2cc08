"""Where a plugin's code may run, in a real browser: framed by its board, never as a tab's
page, and, with ``KANBAN_PLUGIN_ORIGIN``, on an origin of its own.

The escape plugin (``plugins/escape/``) sends the whole tab elsewhere as soon as it runs,
as the red team's did; the naive plugin (``plugins/naive/``) uses the bridge at once.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import BrowserContext, expect

from kanban.access.memberships import membership_set
from kanban.models import Project
from kanban.projects.packages import project_import
from tests.browser.boards import PLUGINS
from tests.browser.helpers import signed_in_page
from tests.factories import a_user
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def alice(db: None) -> User:
    return a_user("alice")


def developer(alice: User, plugin: str) -> Project:
    project = project_import(path=PLUGINS / plugin)
    membership_set(user=alice, project=project, role="developer")
    return project


def test_a_plugin_opened_as_the_tabs_page_is_refused_before_its_code_runs(
    alice: User, new_context: Callable[..., BrowserContext], live_server: LiveServer
) -> None:
    escape = developer(alice, "escape")
    page = signed_in_page(alice, new_context, live_server)

    response = page.goto(f"/plugins/{escape.id}/index.html")

    assert response is not None and response.status == 403
    expect(page.locator("body")).to_contain_text("it runs only inside its board")
    page.wait_for_timeout(300)
    assert page.url.endswith(f"/plugins/{escape.id}/index.html"), "the tab stayed put"


def test_a_framed_plugin_cannot_send_the_board_elsewhere(
    alice: User, new_context: Callable[..., BrowserContext], live_server: LiveServer
) -> None:
    escape = developer(alice, "escape")
    page = signed_in_page(alice, new_context, live_server)

    page.goto(f"/boards/{escape.id}/")

    state = page.frame_locator("#plugin-frame").locator("#state")
    expect(state).not_to_have_text("trying to take over the tab")
    page.wait_for_timeout(300)
    assert page.url.endswith(f"/boards/{escape.id}/")


def test_with_a_plugin_origin_the_plugin_runs_there_and_the_bridge_still_works(
    alice: User,
    new_context: Callable[..., BrowserContext],
    live_servers: Callable[..., list[LiveServer]],
) -> None:
    naive = developer(alice, "naive")
    (server,) = live_servers(1, env={"KANBAN_PLUGIN_ORIGIN": "http://localhost:{live_port}"})
    page = signed_in_page(alice, new_context, server)

    page.goto(f"/boards/{naive.id}/")

    expect(page.frame_locator("#plugin-frame").locator("#state")).to_have_text("loaded 1")
    (frame,) = [f for f in page.frames if f != page.main_frame]
    assert frame.url.startswith(f"http://localhost:{server.port}/plugins/{naive.id}/")
    assert page.url.startswith(f"http://127.0.0.1:{server.port}/boards/")
    on_board_host = page.request.get(f"/plugins/{naive.id}/index.html")
    assert on_board_host.status == 404, "the boards' host no longer serves plugin files"
