"""The bridge websocket end to end through the real ASGI stack (origin check, session auth,
routing, consumer, hub): every frame is validated again, every call is grant-checked, and
subscriptions are dropped the moment access ends."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import DatabaseError, connections

from kanban.access.grant_rules import ALL, NONE, Grant, Rule
from kanban.access.memberships import membership_set
from kanban.access.relationships import relationship_remove
from kanban.asgi import application
from kanban.bridge import ops
from kanban.data.configurations import configuration_active
from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from kanban.data.request_size import max_request_bytes
from kanban.data.target import Target
from kanban.models import Project
from tests.factories import a_board, a_board_and_inventory, a_declaration, users
from tests.kanban.bridge.helpers import (
    CONNECT_TIMEOUT,
    HOST,
    ORIGIN,
    Bridge,
    bridge_for,
    open_bridge,
    opening_context,
    session_cookie,
)

pytestmark = pytest.mark.django_db(transaction=True)

SOURCE = Provenance(via="api")


@pytest.fixture
def world(transactional_db: None) -> dict[str, Any]:
    alice, bob, charlie, dave = users("alice", "bob", "charlie", "dave")
    stock = Rule("prefixes", ("stock:",))
    board, inventory = a_board_and_inventory(
        owner=alice,
        members={bob: "developer", charlie: "guest"},
        grant=Grant(read=stock, write=stock),
    )
    people = {"alice": alice, "bob": bob, "charlie": charlie, "dave": dave}
    return {**people, "board": board, "inventory": inventory}


@pytest.fixture
async def bob_on_board(world: dict[str, Any]) -> AsyncIterator[Bridge]:
    async with bridge_for(world["board"], world["bob"]) as bridge:
        yield bridge


async def inventory_grants_board(world: dict[str, Any], grant: Grant) -> None:
    """The inventory changes what it grants the board (bob's sockets are on the board)."""
    await database_sync_to_async(a_declaration)(world["inventory"], "board", world["board"], grant)


def write(world: dict[str, Any], project: str, key: str, value: Any) -> Any:
    return database_sync_to_async(project_kv_set)(
        target=Target(user=world["alice"], project_id=world[project].id),
        key=key,
        value=value,
        provenance=SOURCE,
    )


# --- connecting ----------------------------------------------------------------------------


async def test_a_socket_opens_with_the_users_context_and_hears_a_promotion_live(
    world: dict[str, Any],
) -> None:
    cookie = await database_sync_to_async(session_cookie)(world["charlie"])
    communicator = WebsocketCommunicator(
        application, f"/ws/boards/{world['board'].id}/", [ORIGIN, HOST, (b"cookie", cookie)]
    )
    assert (await communicator.connect(timeout=CONNECT_TIMEOUT))[0]
    opened = await opening_context(communicator)
    assert (opened["role"], opened["can"]) == ("guest", {"read": True, "write": False})
    assert opened["related"]["inventory"]["status"] == "confirmed"

    await database_sync_to_async(membership_set)(
        user=world["charlie"], project=world["board"], role="developer"
    )
    promoted = await Bridge(communicator).context()
    assert (promoted["role"], promoted["can"]["write"]) == ("developer", True)
    await communicator.disconnect()


async def test_a_plugin_saves_its_users_own_view_into_the_configuration_it_shows(
    world: dict[str, Any], bob_on_board: Bridge
) -> None:
    view = {"view": {"filter": {"text": "bolts"}}}
    saved = await bob_on_board.call("configuration.set", key="default", value=view)
    assert saved == {"v": 1, "id": 1, "ok": True, "result": {}}
    bobs = await database_sync_to_async(configuration_active)(
        user=world["bob"], project_id=world["board"].id
    )
    alices = await database_sync_to_async(configuration_active)(
        user=world["alice"], project_id=world["board"].id
    )
    assert (bobs.values, alices.values) == (view, {})

    someone_elses = await bob_on_board.call("configuration.set", key=str(uuid.uuid4()), value=view)
    assert someone_elses["error"]["code"] == "not_found"
    through_alias = await bob_on_board.call(
        "configuration.set", alias="inventory", key="default", value=view
    )
    assert through_alias["error"]["code"] == "invalid_argument"


async def test_a_member_connects_and_an_outsider_or_anonymous_is_refused(
    world: dict[str, Any],
) -> None:
    communicator, connected, _ = await open_bridge(world["board"], world["charlie"])
    assert connected, "guests may open a board"
    await communicator.disconnect()
    # Refused with a code the page can read (a refused handshake is 1006 to a browser):
    # 4403 for a person who may not open the board, 4401 for nobody signed in.
    _, connected, code = await open_bridge(world["board"], world["dave"])
    assert (connected, code) == (False, 4403)
    anonymous = WebsocketCommunicator(
        application, f"/ws/boards/{world['board'].id}/", [ORIGIN, HOST]
    )
    connected, _ = await anonymous.connect(timeout=CONNECT_TIMEOUT)
    closed = await anonymous.receive_output(timeout=CONNECT_TIMEOUT)
    assert closed == {"type": "websocket.close", "code": 4401}


@pytest.mark.parametrize(
    "origin",
    [b"http://evil.example", b"http://127.0.0.1:1", b"https://127.0.0.1:8443", b"null", None],
)
async def test_a_foreign_null_or_missing_origin_is_refused(
    world: dict[str, Any], origin: bytes | None
) -> None:
    cookie = await database_sync_to_async(session_cookie)(world["bob"])
    headers = [HOST, (b"cookie", cookie)] + ([(b"origin", origin)] if origin else [])
    _, connected, _ = await open_bridge(world["board"], world["bob"], headers=headers)
    assert not connected


# --- calls ---------------------------------------------------------------------------------


async def test_get_and_set_on_the_current_project(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    assert (await bob_on_board.call("get", key="k"))["result"] == {"found": False}
    written = await bob_on_board.call("set", key="k", value={"a": [1, 2.5, None]})
    assert written["ok"] and written["result"]["revision"]
    got = await bob_on_board.call("get", key="k")
    assert got["result"] == {
        "found": True,
        "value": {"a": [1, 2.5, None]},
        "revision": written["result"]["revision"],
    }
    entry = await database_sync_to_async(project_kv_get)(
        target=Target(user=world["alice"], project_id=world["board"].id), key="k"
    )
    assert entry.source["via"] == "bridge"
    assert entry.source["page"] == f"/boards/{world['board'].id}/"
    assert entry.source["user"] == "bob"


async def test_a_database_that_does_not_answer_is_unavailable_and_the_socket_stays(
    bob_on_board: Bridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An exhausted pool or a restart: once this closed the socket (1011), and every watch
    # on it, though the next read would have been served.
    served = ops.dispatch

    async def once_unreachable(*socket: Any, **call: Any) -> Any:
        monkeypatch.setattr(ops, "dispatch", served)
        raise DatabaseError("couldn't get a connection after 10.00 sec")

    monkeypatch.setattr(ops, "dispatch", once_unreachable)
    refused = await bob_on_board.call("get", key="k")
    assert refused["ok"] is False and refused["error"]["code"] == "unavailable"
    assert (await bob_on_board.call("get", key="k"))["result"] == {"found": False}


async def test_bridge_calls_give_their_pooled_connection_back(
    world: dict[str, Any],
) -> None:
    """Calls run on the thread pool; each must return its connection to the pool, or a
    worker runs dry after a few hundred sockets (PostgreSQL's pool; SQLite has none)."""
    pool = getattr(connections["default"], "pool", None)
    if pool is None:
        pytest.skip("only PostgreSQL connections are pooled")
    checked_out = pool.get_stats().get("pool_size", 0) - pool.get_stats().get("pool_available", 0)
    for _ in range(3):
        communicator, connected, _ = await open_bridge(world["board"], world["bob"])
        assert connected
        bridge = Bridge(communicator)
        for n in range(20):
            assert (await bridge.call("set", key=f"k{n}", value=n))["ok"]
            assert (await bridge.call("get", key=f"k{n}"))["ok"]
        await communicator.disconnect()
    stats = pool.get_stats()
    assert stats.get("pool_size", 0) - stats.get("pool_available", 0) <= checked_out


async def test_compare_and_set_conflict_carries_the_current_value(bob_on_board: Bridge) -> None:
    first = await bob_on_board.call("set", key="n", value=1, expectedRevision=None)
    assert first["ok"]
    again = await bob_on_board.call("set", key="n", value=2, expectedRevision=None)
    assert again["error"]["code"] == "conflict"
    assert again["error"]["current"] == {
        "found": True,
        "value": 1,
        "revision": first["result"]["revision"],
    }


async def test_related_reads_and_writes_follow_the_target_grant(bob_on_board: Bridge) -> None:
    assert (await bob_on_board.call("set", alias="inventory", key="stock:bolt", value=3))["ok"]
    assert (await bob_on_board.call("get", alias="inventory", key="stock:bolt"))["result"][
        "value"
    ] == 3
    outside = await bob_on_board.call("get", alias="inventory", key="secret")
    assert outside["error"]["code"] == "forbidden"
    unknown = await bob_on_board.call("get", alias="nobody", key="k")
    assert unknown["error"]["code"] == "unknown_alias"


async def test_a_guest_reads_but_cannot_write(world: dict[str, Any]) -> None:
    communicator, _, _ = await open_bridge(world["board"], world["charlie"])
    bridge = Bridge(communicator)
    assert (await bridge.call("get", key="k"))["ok"]
    assert (await bridge.call("set", key="k", value=1))["error"]["code"] == "forbidden"
    await communicator.disconnect()


async def test_a_developer_cannot_rewrite_the_owners_comment_on_a_board_by_hand(
    world: dict[str, Any],
) -> None:
    board = await database_sync_to_async(a_board)(
        owner=world["alice"], members={world["bob"]: "developer"}
    )
    said = {"id": "a1", "author": "alice", "text": "Not yet.", "at": "2026-12-01", "edited": None}
    await database_sync_to_async(project_kv_set)(
        target=Target(user=world["alice"], project_id=board.id),
        key="comments:c1",
        value=[said],
        provenance=SOURCE,
    )
    communicator, connected, _ = await open_bridge(board, world["bob"])
    assert connected
    bridge = Bridge(communicator)
    current = (await bridge.call("get", key="comments:c1"))["result"]
    forged = {**said, "text": "Approved, ship it."}
    for how in ({}, {"expectedRevision": current["revision"]}):
        refused = await bridge.call("set", key="comments:c1", value=[forged], **how)
        assert refused["error"]["code"] == "forbidden", refused
    assert (await bridge.call("get", key="comments:c1"))["result"] == current
    await communicator.disconnect()


@pytest.mark.parametrize("field", ["projectId", "scope", "target", "path", "__proto__"])
async def test_frames_naming_anything_but_alias_and_key_are_refused(
    bob_on_board: Bridge, world: dict[str, Any], field: str
) -> None:
    frame = {
        "v": 1,
        "id": 7,
        "op": "set",
        "key": "k",
        "value": 1,
        field: str(world["inventory"].id),
    }
    reply = await bob_on_board.send_raw(json.dumps(frame))
    assert reply == {
        "v": 1,
        "id": 7,
        "ok": False,
        "error": {"code": "invalid_argument", "message": reply["error"]["message"], "field": field},
    }
    assert (await bob_on_board.call("get", key="k"))["result"] == {"found": False}


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        '{"v": 2, "id": 1, "op": "get", "key": "k"}',
        '{"v": 1, "id": 0, "op": "get", "key": "k"}',
        '{"v": 1, "id": 1.5, "op": "get", "key": "k"}',
        '{"v": 1, "id": 1, "op": "drop", "key": "k"}',
        '{"v": 1, "id": 1, "op": "get"}',
        '{"v": 1, "id": 1, "op": "get", "key": ""}',
        '{"v": 1, "id": 1, "op": "set", "key": "k", "value": NaN}',
        '{"v": 1, "id": 1, "op": "get", "key": "k", "alias": "Bad Alias"}',
        '{"v": 1, "id": 1, "op": "subscribe", "key": "k"}',
    ],
)
async def test_malformed_frames_get_invalid_argument(bob_on_board: Bridge, text: str) -> None:
    reply = await bob_on_board.send_raw(text)
    assert reply["ok"] is False and reply["error"]["code"] == "invalid_argument"


@pytest.mark.parametrize(
    "text",
    [
        '{"v": 1, "id": ' + "9" * 4301 + ', "op": "get", "key": "k"}',
        '{"v": 1, "id": 1, "op": "set", "key": "k", "value": -' + "1" * 5000 + "}",
        '{"v": 1, "id": 1, "op": "set", "key": "k", "value": [1e999]}',
    ],
)
async def test_numbers_python_cannot_hold_are_refused_and_the_socket_lives_on(
    bob_on_board: Bridge, text: str
) -> None:
    # Found by fuzzing frames: a 4,301-digit integer raised a bare ValueError out of the
    # decoder (the consumer died mid-message); 1e999 decoded to inf although NaN/Infinity
    # are refused.
    reply = await bob_on_board.send_raw(text)
    assert reply["ok"] is False and reply["error"]["code"] == "invalid_argument"
    assert reply["id"] is None
    assert (await bob_on_board.call("get", key="k"))["ok"] is True


async def test_oversized_frames_are_too_large(bob_on_board: Bridge, settings: Any) -> None:
    settings.KANBAN_MAX_VALUE_BYTES = settings.KANBAN_MAX_DOCUMENT_BYTES = 1000
    big = "x" * (max_request_bytes() + 1)
    reply = await bob_on_board.send_raw(
        json.dumps({"v": 1, "id": 1, "op": "set", "key": "k", "value": big})
    )
    assert reply["error"]["code"] == "too_large"


async def test_a_flood_is_rate_limited(world: dict[str, Any], settings: Any) -> None:
    settings.KANBAN_BRIDGE_BURST = 2
    settings.KANBAN_BRIDGE_RATE = 0.001
    communicator, _, _ = await open_bridge(world["board"], world["bob"])
    bridge = Bridge(communicator)
    codes = [(await bridge.call("get", key="k")).get("error", {}).get("code") for _ in range(4)]
    assert codes == [None, None, "rate_limited", "rate_limited"]
    await communicator.disconnect()


# --- revision events and invalidation ------------------------------------------------------


async def test_subscribers_hear_committed_writes_as_alias_and_revision_only(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    assert (await bob_on_board.call("subscribe"))["ok"]
    revision = await write(world, "board", "card:1", {"title": "x"})
    assert await bob_on_board.event() == {
        "v": 1,
        "event": "revision",
        "alias": None,
        "revision": revision,
    }


async def test_a_prefix_grant_hides_writes_outside_its_prefixes(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    assert (await bob_on_board.call("subscribe", alias="inventory"))["ok"]
    await write(world, "inventory", "secret", 1)
    revision = await write(world, "inventory", "stock:nut", 5)
    event = await bob_on_board.event()
    assert event == {"v": 1, "event": "revision", "alias": "inventory", "revision": revision}
    assert await bob_on_board.no_message()


async def test_a_batched_read_through_a_prefix_grant_returns_only_the_keys_it_opens(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await write(world, "inventory", "secret", "never sent")
    revision = await write(world, "inventory", "stock:nut", 5)

    reply = await bob_on_board.call(
        "getMany", alias="inventory", value=["secret", "stock:nut", "stock:bolt"]
    )

    assert reply["ok"] is True, reply
    secret, nut, bolt = reply["result"]
    assert secret["found"] is False and secret["error"]["code"] == "forbidden"
    assert "never sent" not in json.dumps(reply)
    assert nut == {"found": True, "value": 5, "revision": revision}
    assert bolt == {"found": False}


async def test_a_batched_read_of_the_own_project_in_one_frame(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    revisions = [await write(world, "board", f"card:{n}", n) for n in range(3)]
    reply = await bob_on_board.call("getMany", value=["card:2", "card:0", "card:9"])
    assert reply["result"] == [
        {"found": True, "value": 2, "revision": revisions[2]},
        {"found": True, "value": 0, "revision": revisions[0]},
        {"found": False},
    ]
    refused = await bob_on_board.call("getMany", value=[f"k{n}" for n in range(257)])
    assert refused["error"]["code"] == "invalid_argument"


# --- watches: change events that name the keys ---------------------------------------------


async def test_a_watch_names_the_keys_that_changed_under_its_prefix(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    assert (await bob_on_board.call("watch", value={"prefix": "card:"}))["result"] == {
        "watching": True
    }
    await write(world, "board", "columns", ["todo"])
    revision = await write(world, "board", "card:1", {"title": "Bolts"})
    source = {
        "user": "alice",
        "userId": world["alice"].pk,
        "via": "api",
        "consumerProject": str(world["board"].id),
    }
    assert await bob_on_board.event() == {
        "v": 1,
        "event": "changes",
        "alias": None,
        "changes": [
            {"key": "card:1", "revision": revision, "value": {"title": "Bolts"}, "source": source}
        ],
    }
    assert await bob_on_board.no_message(), "columns is outside the prefix"


async def test_one_transaction_is_one_event_naming_every_key(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    from storage import engine
    from storage.namespaces import project_kv
    from storage.writes import set_value

    await bob_on_board.call("watch")
    results = await database_sync_to_async(engine.commit)(
        [set_value(project_kv(world["board"].id, k), n) for n, k in enumerate(("a", "b"))]
    )
    event = await bob_on_board.event()
    assert event["changes"] == [
        {"key": "a", "revision": str(results[0].seq), "value": 0},
        {"key": "b", "revision": str(results[1].seq), "value": 1},
    ]
    assert await bob_on_board.no_message()


async def test_a_watch_through_a_prefix_grant_never_names_a_key_outside_it(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await bob_on_board.call("watch", alias="inventory")
    await write(world, "inventory", "secret", 1)
    revision = await write(world, "inventory", "stock:nut", 5)
    event = await bob_on_board.event()
    assert [(c["key"], c["revision"], c["value"]) for c in event["changes"]] == [
        ("stock:nut", revision, 5)
    ]
    assert "secret" not in json.dumps(event)
    assert await bob_on_board.no_message()


async def test_a_watch_whose_grant_goes_is_invalidated_and_hears_nothing_more(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await bob_on_board.call("watch", alias="inventory")
    await inventory_grants_board(world, Grant(read=NONE, write=NONE))
    invalidated = await bob_on_board.event()
    assert (invalidated["event"], invalidated["code"]) == ("invalidated", "forbidden")
    await write(world, "inventory", "stock:nut", 1)
    assert await bob_on_board.no_message()


@pytest.mark.parametrize(
    "value", [{"prefix": 1}, {"prefix": "k", "projectId": "x"}, ["card:"], {"prefix": "a\x00"}]
)
async def test_a_watch_takes_only_a_prefix(bob_on_board: Bridge, value: Any) -> None:
    reply = await bob_on_board.call("watch", value=value)
    assert reply["error"]["code"] == "invalid_argument"


async def test_unsubscribed_sockets_hear_nothing(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await bob_on_board.call("subscribe")
    await bob_on_board.call("unsubscribe")
    await write(world, "board", "k", 1)
    assert await bob_on_board.no_message()


async def test_narrowing_a_grant_invalidates_once_and_later_calls_are_forbidden(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await bob_on_board.call("subscribe", alias="inventory")
    await inventory_grants_board(world, Grant(read=NONE, write=NONE))
    assert await bob_on_board.event() == {
        "v": 1,
        "event": "invalidated",
        "alias": "inventory",
        "code": "forbidden",
    }
    await write(world, "inventory", "stock:nut", 1)
    assert await bob_on_board.no_message()
    reply = await bob_on_board.call("get", alias="inventory", key="stock:nut")
    assert reply["error"]["code"] == "forbidden"


async def test_a_narrowed_prefix_keeps_the_subscription_with_the_new_rule(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await bob_on_board.call("subscribe", alias="inventory")
    await inventory_grants_board(world, Grant(read=Rule("prefixes", ("stock:a",)), write=NONE))
    await asyncio.sleep(0.3)  # let the re-check finish
    await write(world, "inventory", "stock:b", 1)
    revision = await write(world, "inventory", "stock:a", 1)
    assert (await bob_on_board.event())["revision"] == revision
    assert await bob_on_board.no_message()


async def test_removing_the_relationship_makes_it_pending(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await bob_on_board.call("subscribe", alias="inventory")
    await database_sync_to_async(relationship_remove)(project=world["inventory"], alias="board")
    event = await bob_on_board.event()
    assert (event["event"], event["code"]) == ("invalidated", "relationship_pending")


async def test_removing_a_membership_ends_access_and_closes_the_socket_for_good(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await bob_on_board.call("subscribe")
    await database_sync_to_async(membership_set)(
        user=world["bob"], project=world["board"], role=None
    )
    event = await bob_on_board.event()
    assert (event["event"], event["alias"], event["code"]) == ("invalidated", None, "not_found")
    # 4403: the host stops there, since a reconnect would be refused.
    closed = await bob_on_board.communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4403}


async def test_an_owner_deleting_the_board_closes_its_open_sockets_for_good(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    from kanban.projects.lifecycle import project_delete_by_owner

    await bob_on_board.call("watch")
    await database_sync_to_async(project_delete_by_owner)(
        actor=world["alice"], project_id=world["board"].id
    )
    event = await bob_on_board.event()
    assert (event["event"], event["code"]) == ("invalidated", "not_found")
    closed = await bob_on_board.communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4403}


async def test_deactivating_a_user_invalidates_and_closes_their_sockets(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    from kanban.access.events import publish_access_changed

    await bob_on_board.call("subscribe")

    def deactivate() -> None:
        bob = world["bob"]
        bob.is_active = False
        bob.save(update_fields=["is_active"])
        publish_access_changed(user_ids={bob.pk})

    await database_sync_to_async(deactivate)()
    event = await bob_on_board.event()
    assert (event["event"], event["code"]) == ("invalidated", "unauthenticated")
    closed = await bob_on_board.communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4401}


async def test_under_a_write_only_grant_an_update_value_tells_nothing_of_the_key(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await inventory_grants_board(world, Grant(read=NONE, write=ALL))
    await write(world, "inventory", "stock:nut", 7)
    replies = [
        await bob_on_board.call(
            "set", alias="inventory", key=key, value=1, expectedRevision=expected
        )
        for key in ("stock:nut", "stock:none")
        for expected in (None, "1")
    ]
    assert {reply["error"]["code"] for reply in replies} == {"forbidden"}
    assert all("current" not in reply["error"] for reply in replies)
    plain = await bob_on_board.call("set", alias="inventory", key="stock:nut", value=8)
    assert plain["ok"]


async def test_entrypoints_through_the_bridge_are_listed_by_grant_and_never_run(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    def declare() -> None:
        a_declaration(
            world["inventory"],
            "board",
            world["board"],
            Grant(read=ALL, entrypoints=Rule("prefixes", ("stock_",))),
        )
        declared = [{"id": "stock_count"}, {"id": "reorder"}]
        harness = {"steamHarness": {"projectInfo": {}, "entrypoints": declared}}
        Project.objects.filter(pk=world["inventory"].pk).update(package_json=json.dumps(harness))

    await database_sync_to_async(declare)()
    listed = await bob_on_board.call("entrypoints.list", alias="inventory")
    assert listed["result"] == [{"id": "stock_count", "title": "stock_count"}]
    ran = await bob_on_board.call(
        "entrypoints.run", alias="inventory", key="stock_count", value={"args": ["--all"]}
    )
    assert ran["error"]["code"] == "not_supported"
    outside = await bob_on_board.call("entrypoints.run", alias="inventory", key="reorder")
    assert outside["error"]["code"] == "forbidden"


async def test_one_person_holds_only_so_many_sockets_and_shares_one_message_rate(
    world: dict[str, Any], settings: Any
) -> None:
    """Once 1,000 sockets were accepted for one user, and 50 sockets at the per-socket
    rate answered 20,000 frames in 22 s."""
    settings.KANBAN_SOCKETS_PER_USER = 2
    settings.KANBAN_BRIDGE_USER_BURST = 3
    settings.KANBAN_BRIDGE_USER_RATE = 0.001
    first, _, _ = await open_bridge(world["board"], world["bob"])
    second, _, _ = await open_bridge(world["board"], world["bob"])
    cookie = await database_sync_to_async(session_cookie)(world["bob"])
    third = WebsocketCommunicator(
        application, f"/ws/boards/{world['board'].id}/", [ORIGIN, HOST, (b"cookie", cookie)]
    )
    connected, _ = await third.connect(timeout=5)
    assert connected
    assert await third.receive_output(timeout=5) == {"type": "websocket.close", "code": 4013}
    # alice is not held back by bob's sockets.
    alice, alice_connected, _ = await open_bridge(world["board"], world["alice"])
    assert alice_connected

    codes = []
    for bridge in (Bridge(first), Bridge(second), Bridge(first), Bridge(second)):
        codes.append((await bridge.call("get", key="k")).get("error", {}).get("code"))
    assert codes == [None, None, None, "rate_limited"], "the two sockets share bob's burst"
    assert (await Bridge(alice).call("get", key="k"))["ok"]

    await first.disconnect()
    fourth, fourth_connected, _ = await open_bridge(world["board"], world["bob"])
    assert fourth_connected, "a closed socket frees its place"
    for communicator in (second, alice, fourth):
        await communicator.disconnect()


async def test_a_keys_history_over_the_bridge_follows_the_keys_read_rule(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    first = await write(world, "inventory", "stock:nut", 5)
    second = await write(world, "inventory", "stock:nut", 4)
    await write(world, "inventory", "secret", "payroll")
    reply = await bob_on_board.call("history", alias="inventory", key="stock:nut")
    entries = reply["result"]["entries"]
    assert [(e["revision"], e["value"]) for e in entries] == [(second, 4), (first, 5)]
    assert entries[0]["source"]["user"] == "alice"
    page = await bob_on_board.call(
        "history", alias="inventory", key="stock:nut", value={"limit": 1, "before": second}
    )
    assert [e["revision"] for e in page["result"]["entries"]] == [first]
    hidden = await bob_on_board.call("history", alias="inventory", key="secret")
    assert hidden["error"]["code"] == "forbidden" and "payroll" not in json.dumps(hidden)
    extra = await bob_on_board.call("history", key="k", value={"projectId": "x"})
    assert extra["error"]["code"] == "invalid_argument"
