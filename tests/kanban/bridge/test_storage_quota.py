"""M4 over the bridge websocket: a set past the project's storage quota is refused with
``quota_exceeded`` (and writes nothing), and past the writer's write-bytes rate with
``rate_limited``; the socket lives on either way."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from kanban.models import Project
from kanban.quotas import deployment as quotas
from tests.factories import a_board, users
from tests.kanban.bridge.helpers import Bridge, open_bridge

pytestmark = pytest.mark.django_db(transaction=True)

MEGABYTE = "x" * (2**20 - 100)


@pytest.fixture
def board_and_bob(transactional_db: None) -> tuple[Project, Any]:
    quotas.write_bytes_reset(shared_too=True)
    alice, bob = users("alice", "bob")
    return a_board(owner=alice, members={bob: "developer"}), bob


@pytest.fixture
async def bob_on_board(board_and_bob: tuple[Project, Any]) -> AsyncIterator[Bridge]:
    communicator, connected, _ = await open_bridge(*board_and_bob)
    assert connected
    yield Bridge(communicator)
    await communicator.disconnect()


async def test_a_set_past_the_projects_quota_is_refused_and_writes_nothing(
    bob_on_board: Bridge, settings: Any
) -> None:
    settings.KANBAN_PROJECT_BYTES = 3 * 2**20
    assert (await bob_on_board.call("set", key="blob", value=MEGABYTE))["ok"] is True
    reply = await bob_on_board.call("set", key="other", value=MEGABYTE)
    assert reply["ok"] is False
    assert reply["error"]["code"] == "quota_exceeded"
    assert reply["error"]["limit"] == 3 * 2**20
    assert "3145728" in reply["error"]["message"]
    assert (await bob_on_board.call("get", key="other"))["result"] == {"found": False}


async def test_a_set_past_the_writers_byte_rate_is_rate_limited(
    bob_on_board: Bridge, settings: Any
) -> None:
    settings.KANBAN_WRITE_BYTES_PER_USER = 1.0
    settings.KANBAN_WRITE_BYTES_BURST = 2**21
    replies = [await bob_on_board.call("set", key=f"k{n}", value=MEGABYTE) for n in range(3)]
    assert [reply["ok"] for reply in replies] == [True, True, False]
    assert replies[2]["error"]["code"] == "rate_limited"
    assert (await bob_on_board.call("get", key="k2"))["result"] == {"found": False}
