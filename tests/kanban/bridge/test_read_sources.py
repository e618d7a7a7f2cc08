"""A read names who last wrote a value only when that write was an agent's: the part of the
write's source that says who, through what and which agent (``user``, ``via``, ``agent``,
``runId``, ``conversationId``) rides along with the value, so a Board opened after an
agent's change can mark the card; a person's write adds nothing to the answer, so a board
of people's cards loads as many bytes as before. The key's history keeps the whole source.

An agent's write is the same test as the Board's (``agentOf``): a named agent, anything
through MCP, a run or a conversation. Over the real bridge consumer, on SQLite (the thread
path) and on PostgreSQL (reads on the event loop)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async

from kanban.data.kv import Provenance, project_kv_history, project_kv_set
from kanban.data.target import Target
from tests.factories import a_project, users
from tests.kanban.bridge.helpers import Bridge, bridge_for

pytestmark = pytest.mark.django_db(transaction=True)

BOT = Provenance(via="mcp", token="kb_bot1234", agent="triage-bot")
UNNAMED_MCP = Provenance(via="mcp", token="kb_anon123")
RUN = Provenance(via="api", run_id="run-7")
CONVERSATION = Provenance(via="api", conversation_id="conv-3")
PERSON = Provenance(via="api")


@pytest.fixture
def world(transactional_db: None) -> dict[str, Any]:
    alice, bob = users("alice", "bob")
    board = a_project(name="Board", owner=alice, members={bob: "developer"})
    return {"alice": alice, "bob": bob, "board": board}


@pytest.fixture
async def bob_on_board(world: dict[str, Any]) -> AsyncIterator[Bridge]:
    async with bridge_for(world["board"], world["bob"]) as bridge:
        yield bridge


def write(world: dict[str, Any], key: str, value: Any, provenance: Provenance) -> Any:
    return database_sync_to_async(project_kv_set)(
        target=Target(user=world["alice"], project_id=world["board"].id),
        key=key,
        value=value,
        provenance=provenance,
    )


async def kept_source(world: dict[str, Any], key: str) -> dict[str, Any]:
    """The source the key's newest kept version names (what ``getHistory`` shows)."""
    history = await database_sync_to_async(project_kv_history)(
        target=Target(user=world["alice"], project_id=world["board"].id), key=key
    )
    return dict(history["entries"][0]["source"])


async def test_a_batched_read_carries_the_source_of_an_agents_last_write_only(
    world: dict[str, Any], bob_on_board: Bridge
) -> None:
    written = {
        "card:bot": await write(world, "card:bot", {"title": "Triaged"}, BOT),
        "card:mcp": await write(world, "card:mcp", {"title": "Unnamed"}, UNNAMED_MCP),
        "card:run": await write(world, "card:run", {"title": "Run"}, RUN),
        "card:conv": await write(world, "card:conv", {"title": "Talked"}, CONVERSATION),
        "card:alice": await write(world, "card:alice", {"title": "Mine"}, PERSON),
    }
    keys = [*written, "card:absent"]

    reply = await bob_on_board.call("getMany", value=keys)

    assert reply["ok"] is True, reply
    results = dict(zip(keys, reply["result"], strict=True))
    sources = {
        "card:bot": {"user": "alice", "via": "mcp", "agent": "triage-bot"},
        "card:mcp": {"user": "alice", "via": "mcp"},
        "card:run": {"user": "alice", "via": "api", "runId": "run-7"},
        "card:conv": {"user": "alice", "via": "api", "conversationId": "conv-3"},
    }
    for key, source in sources.items():
        assert results[key] == {
            "found": True,
            "value": results[key]["value"],
            "revision": written[key],
            "source": source,
        }
    # The history keeps the rest (the token, the project the write came through).
    kept = await kept_source(world, "card:bot")
    assert kept == {**kept, **sources["card:bot"]} and kept["token"] == "kb_bot1234"
    assert results["card:alice"] == {
        "found": True,
        "value": {"title": "Mine"},
        "revision": written["card:alice"],
    }
    assert results["card:absent"] == {"found": False}


async def test_a_persons_write_after_an_agents_takes_the_source_away(
    world: dict[str, Any], bob_on_board: Bridge
) -> None:
    await write(world, "card:1", {"title": "Triaged"}, BOT)
    before = await bob_on_board.call("getMany", value=["card:1"])
    assert before["result"][0]["source"]["agent"] == "triage-bot"

    # bob's own change, through this same socket as his Board makes it.
    saved = await bob_on_board.call("set", key="card:1", value={"title": "Checked"})
    assert saved["ok"] is True, saved

    after = await bob_on_board.call("getMany", value=["card:1"])
    assert after["result"] == [
        {"found": True, "value": {"title": "Checked"}, "revision": saved["result"]["revision"]}
    ]
    # The kept version still names bob: the read leaves a person's source out, not the store.
    assert (await kept_source(world, "card:1"))["user"] == "bob"

    # An agent's write after that marks it again.
    again = await write(world, "card:1", {"title": "Re-triaged"}, BOT)
    last = await bob_on_board.call("getMany", value=["card:1"])
    assert last["result"][0]["revision"] == again
    assert last["result"][0]["source"]["agent"] == "triage-bot"


async def test_a_single_read_follows_the_same_rule(
    world: dict[str, Any], bob_on_board: Bridge
) -> None:
    await write(world, "card:bot", {"title": "Triaged"}, BOT)
    await write(world, "card:alice", {"title": "Mine"}, PERSON)
    bot = await bob_on_board.call("get", key="card:bot")
    alice = await bob_on_board.call("get", key="card:alice")
    assert bot["result"]["source"] == {"user": "alice", "via": "mcp", "agent": "triage-bot"}
    assert "source" not in alice["result"]
