"""People and agents writing one Board at the same moment: bob adds cards in his browser
while two agents add ten cards each through ``board_cards`` (the official MCP client), and
a third agent's bare ``kv_store`` set of the index from a stale read is refused. Nothing is
lost: every card is in the database and on every open Board. And an agent's work shows as
the agent's: on the card's face, in a toast and in the card's Activity."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import call_command
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from playwright.sync_api import expect

from kanban.data.kv import project_kv_get
from kanban.data.target import Target
from tests.browser.demo_board import Demo, Person, demo, open_board
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo", "open_board"]

AGENT_CARDS = 10
BOB_CARDS = 5


def token(username: str, project_id: Any, name: str = "") -> str:
    out = io.StringIO()
    call_command("create_token", username, "--project", str(project_id), "--name", name, stdout=out)
    return out.getvalue().strip().splitlines()[-1]


async def agent(server: LiveServer, plaintext: str, name: str, start: threading.Event) -> list[str]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {plaintext}"})
    added = []
    async with http, Client(streamable_http_client(f"{server.url}/mcp/", http_client=http)) as c:
        await asyncio.to_thread(start.wait)
        for n in range(AGENT_CARDS):
            result = await c.call_tool(
                "board_cards", {"action": "add", "title": f"{name} {n}", "column": "todo"}
            )
            assert not result.is_error, result.content
            added.append(json.loads(result.content[0].text)["id"])  # type: ignore[union-attr]
    return added


async def stale_index_write(server: LiveServer, plaintext: str, revision: str) -> Any:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {plaintext}"})
    async with http, Client(streamable_http_client(f"{server.url}/mcp/", http_client=http)) as c:
        result = await c.call_tool(
            "kv_store",
            {"action": "set", "key": "board:cards", "value": [], "expectedRevision": revision},
        )
        return result.is_error, json.loads(result.content[0].text)  # type: ignore[union-attr]


def in_thread(run: Callable[[], Any]) -> Any:
    """Run an asyncio client beside Playwright's sync API, whose own loop holds this thread."""
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(run()))
    thread.start()
    thread.join(timeout=30)
    return out[0]


def test_bob_and_two_agents_add_cards_at_once_and_a_stale_index_write_is_refused(
    demo: Demo, open_board: Callable[..., Person], live_server: LiveServer
) -> None:
    alice, bob = open_board("alice"), open_board("bob")
    stale = project_kv_get(
        target=Target(user=demo.people["alice"], project_id=demo.board.id), key="board:cards"
    )
    assert stale is not None
    tokens = [token(name, demo.board.id) for name in ("bob", "alice", "bob")]

    start = threading.Event()
    results: dict[str, list[str]] = {}

    def run_agent(name: str, plaintext: str) -> None:
        results[name] = asyncio.run(agent(live_server, plaintext, name, start))

    threads = [
        threading.Thread(target=run_agent, args=(name, plaintext))
        for name, plaintext in (("agent-a", tokens[0]), ("agent-b", tokens[1]))
    ]
    for thread in threads:
        thread.start()
    start.set()
    for n in range(BOB_CARDS):  # bob's own Board adds as its dialog does, while the agents run
        bob.act(
            "actions.createCard({title: 'bob ' + arg, description: '', assignees: [],"
            " labels: [], due: null, item: null, column: 'doing'})",
            n,
        )
    for thread in threads:
        thread.join(timeout=60)
    failed, refused = in_thread(
        lambda: asyncio.run(stale_index_write(live_server, tokens[2], stale.revision))
    )
    assert failed and refused["code"] == "conflict", refused

    bob.wait_for("boardDebug.state.pending === 0")
    agents = results["agent-a"] + results["agent-b"]
    assert len(agents) == 2 * AGENT_CARDS
    titles = {f"bob {n}" for n in range(BOB_CARDS)} | {
        f"{name} {n}" for name in ("agent-a", "agent-b") for n in range(AGENT_CARDS)
    }
    expected = 5 + BOB_CARDS + 2 * AGENT_CARDS
    index = project_kv_get(
        target=Target(user=demo.people["alice"], project_id=demo.board.id), key="board:cards"
    )
    assert index is not None and len(index.value) == expected
    assert set(agents) <= set(index.value)
    for person in (alice, bob):
        person.wait_for(f"boardDebug.state.cards.length === {expected}", timeout=15)
        shown = set(person.frame.evaluate("boardDebug.state.cards.map((c) => c.title)"))
        assert titles <= shown


def agent_calls(server: LiveServer, plaintext: str, calls: list[dict[str, Any]]) -> list[Any]:
    """``board_cards`` calls in one MCP session; a call's ``revision`` of None takes the
    revision the previous call answered."""

    async def run() -> list[Any]:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {plaintext}"})
        answers: list[Any] = []
        async with (
            http,
            Client(streamable_http_client(f"{server.url}/mcp/", http_client=http)) as c,
        ):
            for call in calls:
                if "revision" in call and call["revision"] is None:
                    call = {**call, "revision": answers[-1]["revision"]}
                result = await c.call_tool("board_cards", call)
                assert not result.is_error, result.content
                answers.append(json.loads(result.content[0].text))  # type: ignore[union-attr]
        return answers

    return in_thread(lambda: asyncio.run(run()))


def test_an_agents_changes_show_as_the_agents_until_a_person_changes_the_card(
    demo: Demo, open_board: Callable[..., Person], live_server: LiveServer
) -> None:
    """alice's token named triage-bot moves and renames a card over MCP while bob has the
    Board open: bob sees the agent's mark on the card's face and a toast naming the agent
    and whose it is, and the card's Activity names them too; bob's own edit clears the
    mark."""
    bob = open_board("bob")
    board = bob.plugin
    bot = token("alice", demo.board.id, name="triage-bot")
    named = "triage-bot (Alice Martin's agent)"
    expect(board.get_by_test_id("card-c1")).to_be_visible()
    expect(board.get_by_test_id("agent-c1")).to_have_count(0)

    agent_calls(live_server, bot, [{"action": "move", "id": "c1", "column": "doing"}])
    mark = board.get_by_test_id("agent-c1")
    expect(mark).to_have_attribute("aria-label", f"Changed by {named}")
    expect(mark).to_have_attribute("title", f"Changed by {named}")
    toast = board.get_by_test_id("toast").filter(has_text=named).locator(".toast-text")
    expect(toast).to_have_text(f"{named} moved “Write the onboarding guide” to Doing.")
    expect(board.get_by_test_id("agent-c2")).to_have_count(0)

    agent_calls(
        live_server,
        bot,
        [
            {"action": "get", "id": "c1"},
            {"action": "update", "id": "c1", "title": "Guide, triaged", "revision": None},
        ],
    )
    expect(board.get_by_test_id("toast").filter(has_text="renamed")).to_contain_text(
        f"{named} renamed “Write the onboarding guide” to “Guide, triaged”."
    )
    board.get_by_test_id("card-c1").dblclick()
    board.locator("#card-activity-box summary").click()
    entries = board.get_by_test_id("card-activity").locator("li")
    expect(entries.first).to_contain_text(f"{named} bot renamed this card to Guide, triaged")
    expect(entries.first).to_contain_text("via MCP")
    expect(entries.nth(1)).to_contain_text(f"{named} bot moved this card from To do to Doing")

    # bob's own edit: the card is his change now, and the mark goes at once.
    board.locator("#card-title-input").fill("Guide, checked")
    board.get_by_test_id("card-save").click()
    expect(board.get_by_test_id("card-c1").get_by_test_id("card-title")).to_have_text(
        "Guide, checked"
    )
    expect(board.get_by_test_id("agent-c1")).to_have_count(0)
    bob.wait_for("boardDebug.state.pending === 0")
    expect(board.get_by_test_id("agent-c1")).to_have_count(0)


def test_a_board_opened_after_an_agents_change_shows_the_mark_until_a_person_changes_it(
    demo: Demo, open_board: Callable[..., Person], live_server: LiveServer
) -> None:
    """triage-bot moves a card over MCP while nobody has the Board open: bob opens it
    afterwards and the card still carries the agent's mark (his load's read carries the
    agent's write source); the cards people wrote carry none. bob's own edit clears it,
    and a Board opened after that shows none either."""
    bot = token("alice", demo.board.id, name="triage-bot")
    named = "triage-bot (Alice Martin's agent)"
    agent_calls(live_server, bot, [{"action": "move", "id": "c1", "column": "doing"}])

    bob = open_board("bob")
    board = bob.plugin
    mark = board.get_by_test_id("agent-c1")
    expect(mark).to_have_attribute("aria-label", f"Changed by {named}")
    expect(board.get_by_test_id("card-c2")).to_be_visible()
    expect(board.locator("[data-testid^='agent-']")).to_have_count(1)

    board.get_by_test_id("card-c1").dblclick()
    board.locator("#card-title-input").fill("Guide, checked")
    board.get_by_test_id("card-save").click()
    expect(board.get_by_test_id("agent-c1")).to_have_count(0)
    bob.wait_for("boardDebug.state.pending === 0")

    alice = open_board("alice")
    expect(alice.plugin.get_by_test_id("card-c1").get_by_test_id("card-title")).to_have_text(
        "Guide, checked"
    )
    expect(alice.plugin.locator("[data-testid^='agent-']")).to_have_count(0)
