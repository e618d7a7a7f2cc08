"""Typed tool results, in process: every tool publishes an
``outputSchema`` that what it answers keeps to, field for field, and its arguments are
checked against its own ``inputSchema`` by one rule, a bad one refused naming its field
with nothing written. alice owns a Board, bob develops on it through his agent's token."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kanban.accounts.tokens import token_create
from kanban.data.kv import project_kv_get
from kanban.data.target import Target
from kanban.mcp.tools import TOOLS, tool_result
from kanban.models import ApiToken, Project
from tests.factories import a_board, users


@pytest.fixture
def board(transactional_db: None) -> Project:
    alice, bob = users("alice", "bob")
    return a_board(owner=alice, members={bob: "developer"})


@pytest.fixture
def agent(board: Project) -> ApiToken:
    bob = board.memberships.get(user__username="bob").user
    token, _ = token_create(user=bob, name="triage-bot", project_id=board.id)
    return token


def closed(schema: Any) -> Any:
    """The schema with every object that names its properties closed to others: what a
    tool answers must declare each field it carries, so the published schema cannot drift
    behind the answers (the published one stays open, for a client older than a field)."""
    schema = copy.deepcopy(schema)

    def close(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(schema)
    return schema


def output_schema(name: str) -> dict[str, Any]:
    return next(tool["outputSchema"] for tool in TOOLS if tool["name"] == name)


#: (tool, action) of every call ``answered`` checked, so a test can show it ran them all.
checked: set[tuple[str, str]] = set()


def every_action_checked(*tools: str) -> bool:
    wanted = {
        (tool["name"], action)
        for tool in TOOLS
        if tool["name"] in tools
        for action in tool["inputSchema"]["properties"]["action"]["enum"]
    }
    return wanted <= checked


def answered(token: ApiToken, tool: str, **arguments: Any) -> Any:
    """A call that must succeed, its answer checked against the tool's closed schema."""
    checked.add((tool, arguments["action"]))
    failed, value = tool_result(token=token, name=tool, arguments=arguments)
    assert not failed, value
    errors = list(Draft202012Validator(closed(output_schema(tool))).iter_errors(value))
    assert not errors, (arguments["action"], [error.message for error in errors])
    return value


def refusal(token: ApiToken, tool: str, **arguments: Any) -> dict[str, Any]:
    failed, value = tool_result(token=token, name=tool, arguments=arguments)
    assert failed, value
    return dict(value)


def test_every_tool_publishes_an_object_output_schema_and_valid_schemas() -> None:
    for tool in TOOLS:
        # MCP up to 2025-11-25 wants an object at the root of both.
        assert tool["outputSchema"]["type"] == tool["inputSchema"]["type"] == "object"
        Draft202012Validator.check_schema(tool["outputSchema"])
        Draft202012Validator.check_schema(tool["inputSchema"])


def test_every_board_action_answers_what_its_output_schema_declares(
    agent: ApiToken, board: Project
) -> None:
    listed = answered(agent, "board_cards", action="list")
    assert listed["cards"] == [] and listed["cursor"] is None
    card = answered(
        agent,
        "board_cards",
        action="add",
        title="Triage the inbox",
        column="todo",
        labels=["ops"],
        assignees=["bob"],
        start="2027-01-04",
        due="2027-01-31",
        checklist=["Read", "Sort"],
        text="Starting with the oldest.",
    )
    assert card["commentCount"] == 1 and len(card["checklist"]) == 2
    card_id = card["id"]
    assert answered(agent, "board_cards", action="get", id=card_id)["title"] == "Triage the inbox"
    card = answered(
        agent,
        "board_cards",
        action="update",
        id=card_id,
        revision=card["revision"],
        description="Every message older than a week",
    )
    answered(agent, "board_cards", action="move", id=card_id, column="doing")
    versions = answered(agent, "board_cards", action="history", id=card_id)["versions"]
    assert len(versions) == 3 and versions[-1]["card"]["description"] == ""
    card = answered(
        agent,
        "board_cards",
        action="restore_version",
        id=card_id,
        version=versions[-1]["revision"],
        revision=versions[0]["revision"],
    )
    assert card["description"] == "" and card["column"] == "todo"
    answered(agent, "board_cards", action="archive", id=card_id)
    assert answered(agent, "board_cards", action="list", archived=True)["cards"]
    answered(agent, "board_cards", action="restore", id=card_id)
    said = answered(agent, "board_cards", action="comment", id=card_id, text="On it.")
    comment_id = said["comment"]["id"]
    answered(agent, "board_cards", action="comment_edit", id=card_id, comment=comment_id, text="!")
    item = answered(agent, "board_cards", action="checklist_add", id=card_id, text="Read")
    item_id = item["checklist"][-1]["id"]
    answered(agent, "board_cards", action="checklist_tick", id=card_id, item=item_id, done=True)
    answered(agent, "board_cards", action="checklist_rename", id=card_id, item=item_id, text="Go")
    answered(agent, "board_cards", action="checklist_reorder", id=card_id, item=item_id, position=0)
    answered(agent, "board_cards", action="checklist_remove", id=card_id, item=item_id)
    answered(agent, "board_cards", action="comment_delete", id=card_id, comment=comment_id)
    column = answered(agent, "board_cards", action="column_add", title="Review", wip=3)
    answered(agent, "board_cards", action="column_update", column=column["column"]["id"], wip=0)
    answered(
        agent, "board_cards", action="column_reorder", column=column["column"]["id"], position=1
    )
    answered(agent, "board_cards", action="label_add", label="ops", color="sky")
    answered(agent, "board_cards", action="label_update", label="ops", name="Ops", color="red")
    assert answered(agent, "board_cards", action="labels")["labels"] == [
        {"name": "Ops", "color": "red"}
    ]
    answered(agent, "board_cards", action="label_remove", label="ops")
    copied = answered(agent, "board_cards", action="copy_to_board", id=card_id, board=str(board.id))
    assert copied["projectId"] == str(board.id) and not copied["moved"], "a duplicate here"
    found = answered(agent, "board_cards", action="search", text="triage", limit=1)
    assert found["results"][0]["card"]["title"] == "Triage the inbox" and found["cursor"] == "1"
    other = a_board(owner=agent.user, name="Elsewhere")
    both, _ = token_create(
        user=agent.user, name="triage-bot", project_id=board.id, more_project_ids=[other.id]
    )
    moved = answered(both, "board_cards", action="move_to_board", id=card_id, board=str(other.id))
    assert moved["moved"] and moved["projectId"] == str(other.id)
    assert len(answered(agent, "board_cards", action="list", limit=1)["cards"]) == 1
    assert every_action_checked("board_cards"), "a new action needs its answer checked here"


def test_every_knowledge_and_kv_action_answers_what_its_output_schema_declares(
    agent: ApiToken,
) -> None:
    made = answered(
        agent,
        "knowledge_documents",
        action="create",
        id="runbook",
        title="Runbook",
        markdown="# Runbook\nrestart the worker\nthen check the queue",
    )
    assert made["id"] == "runbook"
    assert answered(agent, "knowledge_documents", action="list")["total"] == 1
    answered(agent, "knowledge_documents", action="get", id="runbook")
    answered(agent, "knowledge_documents", action="edit", id="runbook", title="Ops runbook")
    answered(agent, "knowledge_documents", action="search", query="worker", afterLines=1)
    answered(agent, "knowledge_documents", action="read_lines", id="runbook", start=2)
    assert answered(agent, "knowledge_documents", action="delete", id="runbook") == {
        "deleted": True
    }
    assert answered(agent, "kv_store", action="get", key="triage:last") == {"found": False}
    written = answered(agent, "kv_store", action="set", key="triage:last", value={"n": 3})
    got = answered(agent, "kv_store", action="get", key="triage:last")
    assert got == {
        "found": True,
        "value": {"n": 3},
        "revision": written["revision"],
        "source": {"user": "bob", "via": "mcp", "agent": "triage-bot"},
    }
    assert every_action_checked("knowledge_documents", "kv_store")


@pytest.mark.parametrize(
    ("tool", "arguments", "field", "said"),
    [
        ("board_cards", {"action": "add", "title": 5, "column": "todo"}, "title", "a string"),
        ("board_cards", {"action": "add", "title": "", "column": "todo"}, "title", "at least 1"),
        (
            "board_cards",
            {"action": "add", "title": "x", "column": "todo", "labels": ["ops", ""]},
            "labels",
            "labels[1]",
        ),
        ("board_cards", {"action": "list", "limit": 0}, "limit", "at least 1"),
        ("board_cards", {"action": "list", "limit": 1.5}, "limit", "an integer"),
        ("board_cards", {"action": "column_add", "title": "R", "wip": 1000}, "wip", "at most 999"),
        ("board_cards", {"action": "tidy"}, "action", "action must be one of list, get, add"),
        ("board_cards", {"action": "list", "alias": "inventory"}, "alias", "takes no 'alias'"),
        ("board_cards", {}, "action", "action is required"),
        ("kv_store", {"action": "get"}, "key", "key is required"),
        ("kv_store", {"action": "drop", "key": "k"}, "action", "action must be one of get, set"),
        ("kv_store", {"action": "get", "key": "k", "alias": "a b"}, "alias", "alias does not"),
        ("kv_store", {"action": "set", "key": "", "value": 1}, "key", "at least 1"),
        (
            "knowledge_documents",
            {"action": "read_lines", "id": "d", "start": 0},
            "start",
            "at least 1",
        ),
    ],
)
def test_a_bad_argument_is_refused_naming_its_field_and_nothing_is_written(
    agent: ApiToken, tool: str, arguments: dict[str, Any], field: str, said: str
) -> None:
    refused = refusal(agent, tool, **arguments)
    assert refused["code"] == "invalid_argument" and refused["field"] == field, refused
    assert said in refused["message"], refused
    failed, listed = tool_result(token=agent, name="board_cards", arguments={"action": "list"})
    assert not failed and listed["cards"] == []
    assert tool_result(token=agent, name="kv_store", arguments={"action": "get", "key": "k"}) == (
        False,
        {"found": False},
    )


def test_a_refusal_names_the_field_without_repeating_a_huge_value(agent: ApiToken) -> None:
    huge = "x" * 100_000
    refused = refusal(agent, "board_cards", action="add", title=huge, column="todo")
    assert refused["field"] == "title" and len(refused["message"]) < 200, refused["message"]


def test_null_leaves_out_an_argument_unless_its_schema_gives_null_a_meaning(
    agent: ApiToken, board: Project
) -> None:
    """A client that sends every field sends null for the ones it means to leave out; a
    null the schema allows (a due date: none) or a value of any JSON is kept."""
    card = answered(
        agent, "board_cards", action="add", title="Ship", column="todo", description=None
    )
    assert card["description"] == "" and card["due"] is None
    answered(agent, "kv_store", action="set", key="k", value=None, alias=None)
    got = project_kv_get(target=Target(user=agent.user, project_id=board.id), key="k")
    assert got is not None and got.value is None
