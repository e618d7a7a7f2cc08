"""An MCP token (the account page's "MCP (agents)") reads and writes its board at /mcp/,
and REST refuses it: an agent's key is no script's key."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from kanban.accounts.tokens import token_create
from tests.factories import a_project, users
from tests.kanban.mcp.test_mcp import call, connect
from tests.live import LiveServer

pytestmark = pytest.mark.django_db(transaction=True)


def an_mcp_token() -> tuple[str, str]:
    (alice,) = users("alice")
    board = a_project(name="Roadmap", owner=alice)
    return str(board.id), token_create(user=alice, project_id=board.id, scope="mcp")[1]


async def test_an_mcp_token_writes_over_mcp_and_is_refused_over_rest(
    live_server: LiveServer,
) -> None:
    board_id, token = await sync_to_async(an_mcp_token)()

    async with connect(live_server, token) as client:
        failed, written = await call(client, "kv_store", action="set", key="note", value="hi")
        assert not failed and written["revision"]

    request = urllib.request.Request(
        f"{live_server.url}/api/v1/projects/{board_id}/kv/note",
        headers={"Authorization": f"Bearer {token}"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    answer: dict[str, Any] = json.load(refused.value)
    assert refused.value.code == 403 and answer["code"] == "forbidden"
