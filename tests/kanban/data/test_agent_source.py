"""Which write sources a read carries, and what of them: an agent's, by the same test as the
Board's ``agentOf`` (board-history.js), with its cases; who, through what and which agent."""

from __future__ import annotations

from typing import Any

import pytest

from kanban.data.kv import agent_source


@pytest.mark.parametrize(
    ("source", "agents"),
    [
        (None, False),
        ({}, False),
        ({"user": "bob", "via": "bridge", "page": "board"}, False),
        ({"user": "bob", "via": "api", "token": "kb_x"}, False),
        ({"user": "bob", "via": "api", "agent": "  "}, False),
        ({"user": "bob", "via": "api", "runId": ""}, False),
        ({"user": "bob", "via": "api", "agent": "triage-bot"}, True),
        ({"user": "bob", "via": "mcp"}, True),
        ({"user": "bob", "via": "api", "runId": "r"}, True),
        ({"user": "bob", "via": "api", "conversationId": "c"}, True),
    ],
)
def test_an_agents_write_is_the_boards_test(source: Any, agents: bool) -> None:
    """The same cases as the Board's ``agentOf`` (board-history.js)."""
    assert (agent_source(source) is not None) is agents


def test_a_read_carries_who_through_what_and_which_agent_only() -> None:
    source = {
        "user": "alice",
        "userId": 3,
        "via": "mcp",
        "consumerProject": "6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
        "token": "kb_7f3a9c",
        "agent": "triage-bot",
        "runId": "run-7",
        "conversationId": "conv-3",
    }
    assert agent_source(source) == {
        "user": "alice",
        "via": "mcp",
        "agent": "triage-bot",
        "runId": "run-7",
        "conversationId": "conv-3",
    }
