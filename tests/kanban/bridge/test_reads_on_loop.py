"""On PostgreSQL a bridge read (get, getMany, the access decision of subscribe and watch)
runs on the event loop and crosses into no thread; writes and the rest still do. With
``KANBAN_READS_ON_LOOP`` off, every call takes the thread path again."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.db import connection

from kanban.bridge import ops, service
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from storage import aio
from tests.factories import a_project, a_user
from tests.kanban.bridge.helpers import Bridge, open_bridge

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="reads on the event loop are PostgreSQL's"
    ),
]


def alice_and_her_board() -> tuple[Any, Any]:
    alice = a_user("alice")
    board = a_project(name="Board", owner=alice)
    project_kv_set(
        target=Target(user=alice, project_id=board.id),
        key="card:1",
        value={"title": "Bolts"},
        provenance=Provenance(via="api"),
    )
    return alice, board


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the service calls that went to a thread."""
    sent: list[str] = []
    real = service.in_thread

    def counting(func: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
        sent.append(func.__name__)
        return real(func)

    monkeypatch.setattr(service, "in_thread", counting)
    monkeypatch.setattr(ops, "in_thread", counting)
    return sent


async def test_reads_and_subscriptions_cross_into_no_thread_and_writes_still_do(
    threads: list[str],
) -> None:
    alice, board = await database_sync_to_async(alice_and_her_board)()
    communicator, connected, _ = await open_bridge(board, alice)
    assert connected
    bridge = Bridge(communicator)

    got = await bridge.call("get", key="card:1")
    assert got["result"]["value"] == {"title": "Bolts"}
    many = await bridge.call("getMany", value=["card:1", "card:2"])
    assert [item["found"] for item in many["result"]] == [True, False]
    assert (await bridge.call("watch", value={"prefix": "card:"}))["result"] == {"watching": True}
    assert (await bridge.call("subscribe"))["result"] == {"subscribed": True}
    assert threads == []

    revision = got["result"]["revision"]
    saved = await bridge.call(
        "set", key="card:1", value={"title": "Nuts"}, expectedRevision=revision
    )
    assert "revision" in saved["result"]
    assert threads == ["bridge_call"]
    again = await bridge.call("get", key="card:1")
    assert again["result"] == {"found": True, "value": {"title": "Nuts"}, **saved["result"]}
    await communicator.disconnect()


async def test_refusals_on_the_loop_carry_the_same_codes(threads: list[str]) -> None:
    alice, board = await database_sync_to_async(alice_and_her_board)()
    communicator, _, _ = await open_bridge(board, alice)
    bridge = Bridge(communicator)
    unknown = await bridge.call("get", alias="nowhere", key="card:1")
    assert unknown["error"]["code"] == "unknown_alias"
    no_key = await bridge.call("get")
    assert no_key["error"]["code"] == "invalid_argument"
    bad_keys = await bridge.call("getMany", value="card:1")
    assert bad_keys["error"]["code"] == "invalid_argument"
    assert threads == []
    await communicator.disconnect()


async def test_with_the_setting_off_reads_go_to_a_thread(threads: list[str], settings: Any) -> None:
    settings.KANBAN_READS_ON_LOOP = False
    assert not aio.reads_on_loop()
    alice, board = await database_sync_to_async(alice_and_her_board)()
    communicator, _, _ = await open_bridge(board, alice)
    bridge = Bridge(communicator)
    assert (await bridge.call("get", key="card:1"))["result"]["found"] is True
    await bridge.call("subscribe")
    assert threads == ["bridge_call", "access_subscription"]
    await communicator.disconnect()


@pytest.mark.django_db
def test_inside_a_transaction_reads_stay_on_its_connection() -> None:
    # Another connection would not see this transaction's rows.
    assert connection.in_atomic_block
    assert not aio.reads_on_loop()
