"""Boards as MCP resources: an agent lists the boards its token may read and reads each
board and its cards, through the MCP SDK's own client against a live worker; a board
outside the token's reach is the spec's resource-not-found error, whether it exists or not."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from mcp.shared.exceptions import MCPError

from kanban.data.board.cards import board_action
from kanban.data.kv import Provenance
from kanban.models import Project
from tests.factories import a_board, users
from tests.kanban.mcp.test_mcp import connect, token_for
from tests.live import LiveServer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def boards(transactional_db: None) -> dict[str, Project]:
    alice, bob, _carol = users("alice", "bob", "carol")
    roadmap = a_board(owner=alice, name="Roadmap", members={bob: "developer"})
    secret = a_board(owner=alice, name="Secret")
    for title, column in (("Write the plan", "todo"), ("Ship it", "doing")):
        board_action(
            action="add",
            user=alice,
            project_id=roadmap.id,
            arguments={"title": title, "column": column},
            provenance=Provenance(via="cli"),
        )
    return {"roadmap": roadmap, "secret": secret}


def text_of(result: Any) -> Any:
    (content,) = result.contents
    assert content.mime_type == "application/json"
    return json.loads(content.text)


async def test_bob_lists_and_reads_the_board_his_token_reaches_and_nothing_else(
    boards: dict[str, Project], live_server: LiveServer
) -> None:
    roadmap, secret = boards["roadmap"].id, boards["secret"].id
    token = await token_for("bob", "--project", str(roadmap), "--scope", "read")
    async with connect(live_server, token) as client:
        listed = (await client.list_resources()).resources
        assert [r.uri for r in listed] == [
            f"kanban://boards/{roadmap}",
            f"kanban://boards/{roadmap}/cards",
        ]
        assert listed[0].title == "Roadmap" and listed[0].mime_type == "application/json"
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == [
            "kanban://boards/{id}",
            "kanban://boards/{id}/cards",
        ]

        board = text_of(await client.read_resource(f"kanban://boards/{roadmap}"))
        assert board["name"] == "Roadmap"
        assert [c["id"] for c in board["columns"]] == ["todo", "doing", "done"]
        assert (board["cardCount"], board["archivedCount"], board["labels"]) == (2, 0, [])

        cards = text_of(await client.read_resource(f"kanban://boards/{roadmap}/cards"))
        assert [(c["title"], c["column"]) for c in cards["cards"]] == [
            ("Write the plan", "todo"),
            ("Ship it", "doing"),
        ]
        assert all(c["revision"] for c in cards["cards"])

        # alice's other board exists but is not his token's; an unknown one does not exist:
        # both are the same resource-not-found, and so is a URI of no board at all.
        for uri in (
            f"kanban://boards/{secret}",
            f"kanban://boards/{secret}/cards",
            f"kanban://boards/{uuid.uuid4()}",
            "test://static-text",
        ):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(uri)
            assert refused.value.code == -32002, uri
            assert refused.value.error.data == {"uri": uri}


async def test_a_token_whose_person_lost_the_board_lists_nothing_and_reads_nothing(
    boards: dict[str, Project], live_server: LiveServer
) -> None:
    roadmap = boards["roadmap"]
    token = await token_for("bob", "--project", str(roadmap.id))

    @sync_to_async
    def bob_leaves() -> None:
        roadmap.memberships.filter(user__username="bob").delete()

    await bob_leaves()
    async with connect(live_server, token) as client:
        assert (await client.list_resources()).resources == []
        with pytest.raises(MCPError) as refused:
            await client.read_resource(f"kanban://boards/{roadmap.id}")
        assert refused.value.code == -32002
