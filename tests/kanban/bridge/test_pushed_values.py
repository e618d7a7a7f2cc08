"""A watch's change entries carry the new value, under the same read rule that decides
whether the key is named at all, so a viewer applies a change without reading it; and a
value outside a subscription's rule is never pushed, whatever else shares the socket or
the event's encoding.

The board reads two projects: the Inventory under a prefix grant (``stock:`` only) and the
Notes under a full one. The Shop reads the same Inventory under a full grant, through an
alias of the same name.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings

from kanban.access.grant_rules import ALL, Grant, Rule
from kanban.data.kv import Provenance, project_kv_delete, project_kv_history, project_kv_set
from kanban.data.target import Target
from storage import engine
from storage.namespaces import project_kv
from storage.writes import set_value
from tests.factories import a_project, a_relationship, users
from tests.kanban.bridge.helpers import Bridge, open_bridge

pytestmark = pytest.mark.django_db(transaction=True)

SOURCE = Provenance(via="api")
STOCK_ONLY = Grant(read=Rule("prefixes", ("stock:",)))


def declare_both_ways(consumer: Any, alias: str, target: Any, grant: Grant) -> None:
    a_relationship(consumer, target, a_calls_b=alias, b_calls_a=f"to-{alias}", b_grants_a=grant)


@pytest.fixture
def world(transactional_db: None) -> dict[str, Any]:
    alice, bob = users("alice", "bob")
    projects = {
        name: a_project(name=name.title(), owner=alice, members={bob: "developer"})
        for name in ("board", "shop", "inventory", "notes")
    }
    declare_both_ways(projects["board"], "inventory", projects["inventory"], STOCK_ONLY)
    declare_both_ways(projects["board"], "notes", projects["notes"], Grant(read=ALL))
    # The shop's alias for the inventory has the board's name but a full grant.
    a_relationship(
        projects["shop"],
        projects["inventory"],
        a_calls_b="inventory",
        b_calls_a="shop",
        b_grants_a=Grant(read=ALL),
    )
    return {"alice": alice, "bob": bob, **projects}


@pytest.fixture
async def bob_on(world: dict[str, Any]) -> AsyncIterator[Any]:
    opened = []

    async def on(project: str) -> Bridge:
        communicator, connected, _ = await open_bridge(world[project], world["bob"])
        assert connected
        opened.append(communicator)
        return Bridge(communicator)

    yield on
    for communicator in opened:
        await communicator.disconnect()


def write(world: dict[str, Any], project: str, key: str, value: Any) -> Any:
    return database_sync_to_async(project_kv_set)(
        target=Target(user=world["alice"], project_id=world[project].id),
        key=key,
        value=value,
        provenance=SOURCE,
    )


def unsourced(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The changes without the write's source (a test of its own checks that)."""
    return [{name: item for name, item in c.items() if name != "source"} for c in changes]


def commit_many(world: dict[str, Any], project: str, values: dict[str, Any]) -> Any:
    writes = [set_value(project_kv(world[project].id, k), v) for k, v in values.items()]
    return database_sync_to_async(engine.commit)(writes)


async def test_a_prefix_grant_pushes_only_values_it_opens(
    world: dict[str, Any], bob_on: Any
) -> None:
    board = await bob_on("board")
    await board.call("watch", alias="inventory")
    results = await commit_many(world, "inventory", {"secret": "payroll", "stock:nut": 5})
    event = await board.event()
    assert event["changes"] == [{"key": "stock:nut", "revision": str(results[1].seq), "value": 5}]
    assert "payroll" not in json.dumps(event)
    assert await board.no_message()


async def test_two_aliases_with_different_rules_on_one_socket_keep_their_values_apart(
    world: dict[str, Any], bob_on: Any
) -> None:
    board = await bob_on("board")
    await board.call("watch", alias="inventory")
    await board.call("watch", alias="notes")
    await commit_many(world, "inventory", {"secret": "inventory secret", "stock:bolt": 1})
    await commit_many(world, "notes", {"secret": "notes secret", "stock:x": 2})
    first, second = await board.event(), await board.event()
    assert (first["alias"], [c["key"] for c in first["changes"]]) == ("inventory", ["stock:bolt"])
    assert (second["alias"], [c["key"] for c in second["changes"]]) == (
        "notes",
        ["secret", "stock:x"],
    )
    assert second["changes"][0]["value"] == "notes secret"
    assert "inventory secret" not in json.dumps([first, second])
    assert await board.no_message()


async def test_one_write_encoded_for_two_grants_under_one_alias_name_pushes_each_its_own(
    world: dict[str, Any], bob_on: Any
) -> None:
    """The board and the shop both call the inventory ``inventory``; the event is encoded
    once per distinct visible set, never shared across rules."""
    board, shop = await bob_on("board"), await bob_on("shop")
    for socket in (board, shop):
        await socket.call("watch", alias="inventory")
    await commit_many(world, "inventory", {"secret": "payroll", "stock:nut": 7})
    on_board, in_shop = await board.event(), await shop.event()
    assert [c["key"] for c in on_board["changes"]] == ["stock:nut"]
    assert [(c["key"], c["value"]) for c in in_shop["changes"]] == [
        ("secret", "payroll"),
        ("stock:nut", 7),
    ]
    assert "payroll" not in json.dumps(on_board)


@pytest.mark.parametrize("character", ["x", "é", "😀"])
async def test_a_value_at_exactly_the_push_limit_is_pushed_and_one_byte_more_is_named(
    world: dict[str, Any], bob_on: Any, character: str
) -> None:
    limit = settings.KANBAN_PUSH_VALUE_BYTES
    assert limit == 16 * 1024, "the default"
    width = len(character.encode())
    at_limit = character * ((limit - 2) // width) + "x" * ((limit - 2) % width)
    assert len(json.dumps(at_limit, ensure_ascii=False).encode()) == limit
    board = await bob_on("board")
    await board.call("watch", alias="notes")

    revision = await write(world, "notes", "doc", at_limit)
    pushed = unsourced((await board.event())["changes"])
    assert pushed == [{"key": "doc", "revision": revision, "value": at_limit}]

    revision = await write(world, "notes", "doc", at_limit + "x")
    named = unsourced((await board.event())["changes"])
    assert named == [{"key": "doc", "revision": revision}], "named only, to be read"


async def test_a_deleted_key_is_pushed_as_deleted_and_a_set_null_as_a_value(
    world: dict[str, Any], bob_on: Any
) -> None:
    board = await bob_on("board")
    await board.call("watch")
    await write(world, "board", "card:1", None)
    assert (await board.event())["changes"][0]["value"] is None
    deleted = await database_sync_to_async(project_kv_delete)(
        target=Target(user=world["alice"], project_id=world["board"].id),
        key="card:1",
        provenance=SOURCE,
    )
    assert deleted
    (change,) = (await board.event())["changes"]
    assert change["deleted"] is True and "value" not in change


async def test_a_change_names_who_made_it_as_the_keys_history_does(
    world: dict[str, Any], bob_on: Any, settings: Any
) -> None:
    """So a Board can say an agent moved a card without reading its history: a set, a
    value too big to push and a deletion each carry their write's source, the same one the
    key's kept version holds; a write that named no source carries none."""
    settings.KANBAN_PUSH_VALUE_BYTES = 100
    board = await bob_on("board")
    await board.call("watch")
    await write(world, "board", "card:1", {"title": "Bolts"})
    await write(world, "board", "card:1", {"title": "x" * 200})
    await database_sync_to_async(project_kv_delete)(
        target=Target(user=world["alice"], project_id=world["board"].id),
        key="card:1",
        provenance=SOURCE,
    )
    changes = [(await board.event())["changes"][0] for _ in range(3)]
    history = await database_sync_to_async(project_kv_history)(
        target=Target(user=world["bob"], project_id=world["board"].id), key="card:1"
    )
    kept = [entry["source"] for entry in reversed(history["entries"])]
    assert [c["source"] for c in changes] == kept
    assert kept[0]["user"] == "alice" and kept[0]["via"] == "api"
    assert "value" not in changes[1] and changes[2]["deleted"] is True
    await commit_many(world, "board", {"bare": 1})
    assert "source" not in (await board.event())["changes"][0]


async def test_with_pushing_off_every_change_is_named_only(
    world: dict[str, Any], bob_on: Any, settings: Any
) -> None:
    settings.KANBAN_PUSH_VALUE_BYTES = 0
    board = await bob_on("board")
    await board.call("watch")
    revision = await write(world, "board", "k", 1)
    assert unsourced((await board.event())["changes"]) == [{"key": "k", "revision": revision}]


async def test_a_batch_pushes_at_most_sixteen_values_at_the_limit_and_names_the_rest(
    world: dict[str, Any], bob_on: Any, settings: Any
) -> None:
    settings.KANBAN_PUSH_VALUE_BYTES = 100
    board = await bob_on("board")
    await board.call("watch")
    value = "x" * 98  # 100 bytes of JSON
    await commit_many(world, "board", {f"k{n:02}": value for n in range(20)})
    changes = (await board.event())["changes"]
    assert [("value" in c) for c in changes] == [True] * 16 + [False] * 4
