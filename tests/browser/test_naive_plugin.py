"""A plugin written the way seed 000's examples read loads every time.

The naive plugin (``plugins/naive/app.js``) calls ``getValue``, ``setValue`` and
``subscribe`` the moment its script runs, before the host has handed it a port. Those calls
wait in the SDK and go out once connected; the host must never lose them to the
handshake. Each load counts itself in the board's KV and waits for the revision event of
its own write, so one load that completes has done all three.

It is opened again and again in one tab, and in fresh tabs: the handshake race it guards
against lost about half of such loads.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from kanban.access.memberships import membership_set
from kanban.models import Project
from kanban.projects.packages import project_import
from storage.kv import Dataset, kv_get
from tests.browser.boards import PLUGINS
from tests.browser.helpers import log_in_by_cookie
from tests.factories import a_user
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: 20 a test unless ``KANBAN_NAIVE_LOADS`` says (100 for the full run). The race this guards
#: against lost about half of all loads and lives in the SDK and the host, whatever the
#: database: the two tests' 40 loads miss it once in 2^40 runs. Marked slow: each load in a
#: fresh tab costs a second or two, so CI's PostgreSQL pass runs them and the README's test
#: command leaves them to the plugin test host's reloads (tests/bridge_js).
LOADS = int(os.environ.get("KANBAN_NAIVE_LOADS") or 20)
#: One load, from navigation to "loaded N", on a slow machine; a lost call waits 15 s.
LOAD_TIMEOUT_MS = 10_000


@pytest.fixture
def naive() -> Project:
    return project_import(path=PLUGINS / "naive")


@pytest.fixture
def context(
    naive: Project, new_context: Callable[..., BrowserContext], live_server: LiveServer
) -> BrowserContext:
    alice = a_user("alice")
    membership_set(user=alice, project=naive, role="developer")
    context = new_context(base_url=live_server.url)
    log_in_by_cookie(context, alice, live_server.url)
    return context


def expect_loaded(page: Page, count: int) -> None:
    state = page.frame_locator("#plugin-frame").locator("#state")
    expect(state).to_have_text(f"loaded {count}", timeout=LOAD_TIMEOUT_MS)


def loads_counted(project: Project) -> int:
    entry = kv_get(dataset=Dataset(project.id), key="naive:loads")
    assert entry is not None
    return int(entry.value)


@pytest.mark.long
@pytest.mark.slow
def test_a_plugin_calling_the_bridge_at_once_loads_every_time_in_one_tab(
    naive: Project, context: BrowserContext
) -> None:
    page = context.new_page()
    page.goto(f"/boards/{naive.id}/")
    expect_loaded(page, 1)
    for count in range(2, LOADS + 1):
        page.reload()
        expect_loaded(page, count)
    assert loads_counted(naive) == LOADS


@pytest.mark.long
@pytest.mark.slow
def test_a_plugin_calling_the_bridge_at_once_loads_every_time_in_fresh_tabs(
    naive: Project, context: BrowserContext
) -> None:
    for count in range(1, LOADS + 1):
        page = context.new_page()
        page.goto(f"/boards/{naive.id}/")
        expect_loaded(page, count)
        page.close()
    assert loads_counted(naive) == LOADS
