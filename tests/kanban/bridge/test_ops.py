"""The bridge's one op table: every op of the protocol spec has one row and no row names an
op the spec does not have; and a new op is the spec's entry, one row and its service, with
nothing else to change: alice's page asks it through the real consumer, and its frame is
checked, its target decided and its refusals rendered as every other op's are."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async

from kanban.bridge import frames, ops
from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from kanban.data.target import Target
from storage.limits import SPEC
from tests.factories import a_project, a_user
from tests.kanban.bridge.helpers import Bridge, open_bridge

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_op_of_the_spec_has_one_row_and_every_row_an_op() -> None:
    assert ops.missing_rows() == (set(), set())
    assert "attachments.upload" not in ops.TABLE  # the host's, over HTTP


# --- the new op, as a change would add it: (1) the spec's entry ----------------------------
PROBES = {"exists": {"op": "kv.exists", "key": "required"}}


# (2) the service
def kv_exists(*, target: Target, key: str) -> dict[str, bool]:
    found = project_kv_get(
        target=Target(user=target.user, project_id=target.project_id, alias=target.alias),
        key=key,
    )
    return {"exists": found is not None}


# (3) one row
ROW = ops.Row(kv_exists, lambda call: {"target": call.target, "key": call.request.key})
# --- end of the new op ----------------------------------------------------------------------


@pytest.fixture
def with_the_new_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frames, "WIRE_OPS", frames.WireOps.of({**SPEC, "probes": PROBES}))
    monkeypatch.setitem(ops.TABLE, "kv.exists", ROW)


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


async def test_before_the_op_is_added_the_socket_does_not_know_it() -> None:
    alice, board = await database_sync_to_async(alice_and_her_board)()
    communicator, connected, _ = await open_bridge(board, alice)
    assert connected
    refused = await Bridge(communicator).call("kv.exists", key="card:1")
    assert refused["error"]["code"] == "invalid_argument"
    assert refused["error"]["message"] == "unknown op"
    await communicator.disconnect()


async def test_a_new_op_added_by_spec_row_and_service_works_through_the_consumer(
    with_the_new_op: None,
) -> None:
    assert ops.missing_rows() == (set(), set())
    alice, board = await database_sync_to_async(alice_and_her_board)()
    communicator, connected, _ = await open_bridge(board, alice)
    assert connected
    bridge = Bridge(communicator)

    assert (await bridge.call("kv.exists", key="card:1"))["result"] == {"exists": True}
    assert (await bridge.call("kv.exists", key="card:2"))["result"] == {"exists": False}
    # The spec's entry is checked like any other op's: a key it needs, nothing it does not take.
    missing = await bridge.call("kv.exists")
    assert missing["error"] == {
        "code": "invalid_argument",
        "message": "kv.exists needs 'key'",
        "field": "key",
    }
    extra = await bridge.call("kv.exists", key="card:1", value=1)
    assert extra["error"]["field"] == "value"
    # Its target is decided by the one access function: an alias the board never declared.
    unknown = await bridge.call("kv.exists", alias="nowhere", key="card:1")
    assert unknown["error"]["code"] == "unknown_alias"
    await communicator.disconnect()
