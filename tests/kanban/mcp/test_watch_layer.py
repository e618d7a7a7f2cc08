"""The MCP watcher when the channel layer fails: a group it could not join is joined again
once the layer answers, and each subscriber is told to read its board again (what changed
meanwhile was not heard). In process, on the real layer (in memory, or Redis with REDIS_URL)
with one failure put in."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from kanban.accounts.tokens import token_create
from kanban.data.change_groups import CHANGED, project_group
from kanban.mcp import watch
from tests.factories import a_board, users

pytestmark = pytest.mark.django_db(transaction=True)


class Session:
    def __init__(self) -> None:
        self.updated: list[str] = []

    async def send_resource_updated(self, uri: str) -> None:
        self.updated.append(uri)


async def test_a_group_not_joined_in_an_outage_is_joined_after_it_and_the_agent_rereads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @sync_to_async
    def world() -> tuple[Any, Any]:
        (alice,) = users("alice")
        board = a_board(owner=alice, name="Roadmap")
        token, _ = token_create(
            user=alice,
            name="bot",
            project_id=board.id,
            more_project_ids=[],
            scope="mcp",
            lifetime=None,
        )
        return board, token

    board, token = await world()
    uri = f"kanban://boards/{board.id}"
    monkeypatch.setattr(watch, "RETRY_SECONDS", 0.05)
    watcher = watch.Watcher()
    layer = watcher.layer  # the in-memory layer, or with REDIS_URL the watcher's own Redis one
    real_group_add = layer.group_add
    failures = [1]

    async def group_add(group: str, channel: str) -> None:
        if failures:
            failures.pop()
            raise ConnectionError("the layer is down")
        await real_group_add(group, channel)

    monkeypatch.setattr(layer, "group_add", group_add)
    session = Session()
    try:
        await watcher.subscribe(
            session_id="s1", session=session, token=token, board=board.id, uri=uri
        )
        assert not watcher.layer_ok
        for _ in range(100):
            if session.updated:
                break
            await asyncio.sleep(0.02)
        assert session.updated == [uri]  # read again: the outage may have hidden a change
        assert watcher.layer_ok

        await layer.group_send(project_group(board.id), {"type": CHANGED, "project": str(board.id)})
        for _ in range(100):
            if len(session.updated) == 2:
                break
            await asyncio.sleep(0.02)
        assert session.updated == [uri, uri]
    finally:
        for task in watcher._tasks:
            task.cancel()
