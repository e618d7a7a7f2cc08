"""A plugin writes a document into a RELATED project's Knowledge base through the bridge and
reads it back, in Chromium against a real daphne worker. The Wiki's declaration grants the
board knowledge read/write and no KV (tests/browser/plugins/knowledge_probe and
knowledge_wiki)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from kanban.access.memberships import membership_set
from kanban.data.knowledge import project_knowledge_list
from kanban.data.target import Target
from kanban.models import Project
from kanban.projects.packages import project_import
from storage.knowledge import knowledge_last_write
from tests.browser.helpers import log_in_by_cookie, screenshot
from tests.factories import a_user
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PLUGINS = Path(__file__).parent / "plugins"


@pytest.fixture
def bob() -> User:
    return a_user("bob")


@pytest.fixture
def projects(bob: User) -> tuple[Project, Project]:
    """The probe board and the Wiki, declaring each other; bob develops on both."""
    board = project_import(path=PLUGINS / "knowledge_probe")
    wiki = project_import(path=PLUGINS / "knowledge_wiki")
    for project in (board, wiki):
        membership_set(user=bob, project=project, role="developer")
    return board, wiki


def test_a_plugin_creates_a_document_in_a_related_project_and_reads_it_back(
    bob: User, projects: tuple[Project, Project], page: Page, live_server: LiveServer
) -> None:
    board, wiki = projects
    log_in_by_cookie(page.context, bob, live_server.url)
    page.goto(f"/boards/{board.id}/")
    expect(page.locator("#bridge-status")).to_have_text("Live")
    plugin = page.frame_locator("#plugin-frame")
    expect(plugin.locator("#status")).to_have_text("ready")

    plugin.get_by_role("button", name="Create in the wiki").click()

    expect(plugin.locator("#status")).to_have_text("done")
    expect(plugin.locator("#read-back")).to_have_text(
        "Written from the board: # Hello\nWritten through the bridge."
    )
    expect(plugin.locator("#listed")).to_have_text("Written from the board")
    screenshot(page, "knowledge-related-document")

    listed = project_knowledge_list(target=Target(user=bob, project_id=wiki.id))
    (document,) = listed.documents
    assert document.title == "Written from the board"
    assert plugin.locator("#created-id").inner_text() == document.id
    last = knowledge_last_write(project_id=wiki.id, document_id=document.id)
    assert last is not None and last.source is not None
    assert last.source["via"] == "bridge"
    assert last.source["alias"] == "wiki"
    assert last.source["consumerProject"] == str(board.id)
    assert last.source["page"] == f"/boards/{board.id}/"


#: Creates a document of ``size`` bytes of control characters (six bytes each in the
#: frame's JSON, the worst case) through the SDK and the host relay; the outcome.
_CREATE_AT = """async (_body, size) => {
  const wiki = window.steamHarnessKanban.relatedProjects.get("wiki").knowledge;
  try {
    const created = await wiki.createDocument({ title: "Big", markdown: "\\u0001".repeat(size) });
    return { ok: true, size: created.size };
  } catch (error) {
    return { ok: false, code: error.code };
  }
}"""


def test_a_document_at_its_8_mib_limit_goes_through_the_host_and_one_byte_more_does_not(
    bob: User, projects: tuple[Project, Project], page: Page, live_server: LiveServer
) -> None:
    board, wiki = projects
    sent: list[int] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda text: sent.append(len(text))))
    log_in_by_cookie(page.context, bob, live_server.url)
    page.goto(f"/boards/{board.id}/")
    expect(page.locator("#bridge-status")).to_have_text("Live")
    frame = page.frame_locator("#plugin-frame").locator("body")
    expect(frame.locator("#status")).to_have_text("ready")
    limit = 8 * 1024 * 1024

    at_limit = frame.evaluate(_CREATE_AT, limit)
    relayed = max(sent)
    too_large = frame.evaluate(_CREATE_AT, limit + 1)

    assert at_limit == {"ok": True, "size": limit}
    assert relayed > 6 * limit, "the frame carried the worst-case encoding"
    assert too_large == {"ok": False, "code": "too_large"}
    assert max(sent) == relayed, "the host refused it without relaying it"
    assert [
        d.size
        for d in project_knowledge_list(target=Target(user=bob, project_id=wiki.id)).documents
    ] == [limit]
