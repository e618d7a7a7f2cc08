"""Any plugin attaches files to cards through the SDK, in Chromium, against a real worker:
``kanban.attachments`` in a third party's plugin (``plugins/attachments_probe``), which
lists card c1's files the moment its script runs.

alice (developer) attaches a PNG: it is listed with its cover, which paints in an <img>
inside the sandboxed iframe (a blob: URL of the plugin page: the host fetched the cover
with the session the iframe has not), and its download link, opened as a tab would, serves
the image inline; then she removes it. bob (guest) sees it too and may not attach. A file of
exactly KANBAN_ATTACHMENT_BYTES is attached, one byte more is refused ``too_large`` before
it is sent, and nothing of it is written.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from PIL import Image
from playwright.sync_api import BrowserContext, FrameLocator, Page, expect

from kanban.access.memberships import membership_set
from kanban.models import Project
from kanban.projects.packages import project_import
from storage.kv import Dataset, kv_get
from tests.browser.boards import PLUGINS
from tests.browser.helpers import log_in_by_cookie
from tests.factories import a_user
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: The worker's KANBAN_ATTACHMENT_BYTES: small, so the test sends little.
LIMIT = 300_000
TIMEOUT_MS = 15_000


@pytest.fixture
def probe() -> Iterator[Project]:
    project = project_import(path=PLUGINS / "attachments_probe")
    yield project
    # The worker keeps files where the settings say (var/attachments), not in the test
    # process's temporary folder: what this test attached goes with it.
    shutil.rmtree(Path(settings.BASE_DIR) / "var" / "attachments" / str(project.id), True)


@pytest.fixture
def server(live_servers: Callable[..., list[LiveServer]]) -> LiveServer:
    (worker,) = live_servers(1, env={"KANBAN_ATTACHMENT_BYTES": str(LIMIT)})
    return worker


@pytest.fixture
def people(probe: Project) -> dict[str, Any]:
    alice, bob = a_user("alice"), a_user("bob")
    membership_set(user=alice, project=probe, role="developer")
    membership_set(user=bob, project=probe, role="guest")
    return {"alice": alice, "bob": bob}


def board_of(
    who: str,
    people: dict[str, Any],
    probe: Project,
    server: LiveServer,
    new_context: Callable[..., BrowserContext],
) -> tuple[Page, FrameLocator]:
    context = new_context(base_url=server.url)
    log_in_by_cookie(context, people[who], server.url)
    page = context.new_page()
    page.goto(f"/boards/{probe.id}/")
    plugin = page.frame_locator("#plugin-frame")
    expect(plugin.locator("#state")).to_have_text("listed 0", timeout=TIMEOUT_MS)
    return page, plugin


def png(tmp_path: Path) -> Path:
    path = tmp_path / "shot.png"
    Image.new("RGB", (640, 480), (20, 120, 200)).save(path, format="PNG")
    return path


def stored(probe: Project) -> list[dict[str, Any]]:
    entry = kv_get(dataset=Dataset(probe.id), key="attachments:c1")
    return [] if entry is None else list(entry.value["attachments"])


def test_alice_attaches_a_png_whose_cover_paints_in_the_plugin_and_bob_a_guest_may_not(
    probe: Project,
    people: dict[str, Any],
    server: LiveServer,
    new_context: Callable[..., BrowserContext],
    tmp_path: Path,
) -> None:
    alice_page, alice = board_of("alice", people, probe, server, new_context)
    _, bob = board_of("bob", people, probe, server, new_context)

    alice.locator("#file").set_input_files(png(tmp_path))
    expect(alice.locator("#action")).to_have_text("uploaded shot.png", timeout=TIMEOUT_MS)
    expect(alice.locator("#state")).to_have_text("listed 1")
    (item,) = stored(probe)
    assert item["image"] == {"width": 640, "height": 480}

    for plugin in (alice, bob):
        cover = plugin.get_by_alt_text("cover of shot.png")
        expect(cover).to_have_attribute("src", re.compile(r"^blob:"), timeout=TIMEOUT_MS)
        cover.evaluate("img => img.decode()")
        assert cover.evaluate("img => img.naturalWidth") == 320

    # The link, opened as a new tab opens it (with alice's session): the image, inline.
    href = alice.get_by_role("link", name="shot.png").get_attribute("href")
    assert href is not None and href.startswith(server.url + "/attachments/")
    download = alice_page.request.get(href)
    assert download.status == 200
    assert download.headers["content-type"] == "image/png"
    assert download.headers["content-disposition"].startswith("inline;")
    assert download.headers["x-content-type-options"] == "nosniff"
    assert download.body() == png(tmp_path).read_bytes()

    bob.locator("#file").set_input_files(png(tmp_path))
    expect(bob.locator("#action")).to_have_text(
        "failed forbidden: writing in this project needs the developer role", timeout=TIMEOUT_MS
    )
    assert len(stored(probe)) == 1

    alice.get_by_role("button", name="Remove shot.png").click()
    expect(alice.locator("#action")).to_have_text("removed", timeout=TIMEOUT_MS)
    expect(alice.locator("#state")).to_have_text("listed 0")
    expect(bob.locator("#state")).to_have_text("listed 0", timeout=TIMEOUT_MS)
    assert stored(probe) == []


def test_a_file_at_the_byte_limit_is_attached_and_one_byte_more_is_too_large(
    probe: Project,
    people: dict[str, Any],
    server: LiveServer,
    new_context: Callable[..., BrowserContext],
    tmp_path: Path,
) -> None:
    _, alice = board_of("alice", people, probe, server, new_context)
    at_limit = tmp_path / "at-limit.bin"
    at_limit.write_bytes(b"\x01" * LIMIT)
    over = tmp_path / "over.bin"
    over.write_bytes(b"\x01" * (LIMIT + 1))

    alice.locator("#file").set_input_files(over)
    expect(alice.locator("#action")).to_have_text(
        f"failed too_large: a file may have at most {LIMIT} bytes (KANBAN_ATTACHMENT_BYTES)",
        timeout=TIMEOUT_MS,
    )
    assert stored(probe) == []

    alice.locator("#file").set_input_files(at_limit)
    expect(alice.locator("#action")).to_have_text("uploaded at-limit.bin", timeout=TIMEOUT_MS)
    (item,) = stored(probe)
    assert (item["name"], item["size"], item["image"]) == ("at-limit.bin", LIMIT, None)
    expect(alice.locator("img")).to_have_count(0)
