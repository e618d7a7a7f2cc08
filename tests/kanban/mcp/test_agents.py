"""Agents visible as agents: an MCP token has a name ("triage-bot"), and
every write made through it records that name beside its owner's, so the Board's Activity
can say "triage-bot (bob's agent)" rather than "bob [agent]". alice owns a Board, bob
develops on it and runs the agent."""

from __future__ import annotations

from typing import Any

import pytest

from kanban.accounts.tokens import token_create
from kanban.data.kv import project_kv_get, project_kv_history
from kanban.data.target import Target
from kanban.mcp.tools import tool_result
from kanban.models import ApiToken, Project
from tests.factories import a_board, users


@pytest.fixture
def board(transactional_db: None) -> Project:
    alice, bob = users("alice", "bob")
    return a_board(owner=alice, members={bob: "developer"})


def a_token(board: Project, name: str) -> ApiToken:
    bob = board.memberships.get(user__username="bob").user
    token, _ = token_create(user=bob, name=name, project_id=board.id)
    return token


def run(token: ApiToken, tool: str, **arguments: Any) -> Any:
    failed, value = tool_result(token=token, name=tool, arguments=arguments)
    assert not failed, value
    return value


def source_of(board: Project, key: str) -> dict[str, Any]:
    bob = board.memberships.get(user__username="bob").user
    entry = project_kv_get(target=Target(user=bob, project_id=board.id), key=key)
    assert entry is not None and entry.source is not None
    return entry.source


def test_every_write_of_a_named_agent_records_its_name_beside_its_owner(board: Project) -> None:
    agent = a_token(board, "triage-bot")
    card = run(agent, "board_cards", action="add", title="Sort the inbox", column="todo")
    run(agent, "board_cards", action="comment", id=card["id"], text="Taking this one.")
    run(agent, "kv_store", action="set", key="triage:last", value=card["id"])
    for key in (f"card:{card['id']}", f"comments:{card['id']}", "triage:last"):
        source = source_of(board, key)
        assert (source["agent"], source["user"], source["via"]) == ("triage-bot", "bob", "mcp")
        assert source["token"] == agent.prefix, key
    run(agent, "board_cards", action="move", id=card["id"], column="doing")
    assert source_of(board, f"card:{card['id']}")["agent"] == "triage-bot"


def test_an_unnamed_token_records_no_agent_name_and_the_name_is_recorded_trimmed(
    board: Project,
) -> None:
    run(a_token(board, ""), "kv_store", action="set", key="a", value=1)
    run(a_token(board, "   "), "kv_store", action="set", key="b", value=1)
    run(a_token(board, "  triage-bot \n"), "kv_store", action="set", key="c", value=1)
    assert "agent" not in source_of(board, "a") and "agent" not in source_of(board, "b")
    assert source_of(board, "c")["agent"] == "triage-bot"


def test_the_cards_history_the_boards_activity_reads_names_the_agent_and_its_owner(
    board: Project,
) -> None:
    """The Board's Activity is the card's kept versions: each says who (the owner), through
    what (mcp) and, for an agent's, which agent, so it can read "triage-bot (bob's agent)"."""
    agent = a_token(board, "triage-bot")
    card = run(agent, "board_cards", action="add", title="Sort the inbox", column="todo")
    alice = board.memberships.get(user__username="alice").user
    run(agent, "board_cards", action="move", id=card["id"], column="doing")
    history = project_kv_history(
        target=Target(user=alice, project_id=board.id), key=f"card:{card['id']}"
    )
    moved, added = history["entries"]
    for version in (moved, added):
        assert (version["source"]["agent"], version["source"]["user"]) == ("triage-bot", "bob")
