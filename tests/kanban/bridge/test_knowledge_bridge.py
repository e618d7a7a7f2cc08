"""Knowledge over the bridge websocket, through the real ASGI stack: the seven ops for the
board's own Knowledge base and a related project's under its knowledge grant, and revision
events for document writes filtered by the knowledge read rule (never by the KV one)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async

from kanban.access.grant_rules import ALL, NONE, Grant, Rule
from kanban.data.knowledge import project_knowledge_create, project_knowledge_edit
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from storage.kv import Dataset, kv_get
from tests.factories import a_declaration, a_project, users
from tests.kanban.bridge.helpers import Bridge, bridge_for, open_bridge

pytestmark = pytest.mark.django_db(transaction=True)

SOURCE = Provenance(via="api")
RUNBOOKS = Rule("prefixes", ("runbook-",))


@pytest.fixture
def world(transactional_db: None) -> dict[str, Any]:
    """alice owns and bob develops on the Board and the Wiki, which relate as ``wiki`` and
    ``board``; the Wiki grants the Board KV read and knowledge read/write on everything."""
    alice, bob, charlie = users("alice", "bob", "charlie")
    people = {"alice": alice, "bob": bob, "charlie": charlie}
    members = {bob: "developer", charlie: "guest"}
    board = a_project(name="Board", owner=alice, members=members)
    wiki = a_project(name="Wiki", owner=alice, members=members)
    a_declaration(board, "wiki", wiki)
    world = {**people, "board": board, "wiki": wiki}
    grant_board(world, kv_read=ALL, knowledge_read=ALL, knowledge_write=ALL)
    return world


def grant_board(
    world: dict[str, Any], *, kv_read: Rule, knowledge_read: Rule, knowledge_write: Rule = NONE
) -> None:
    a_declaration(
        world["wiki"],
        "board",
        world["board"],
        Grant(read=kv_read, knowledge_read=knowledge_read, knowledge_write=knowledge_write),
    )


@pytest.fixture
async def bob_on_board(world: dict[str, Any]) -> AsyncIterator[Bridge]:
    async with bridge_for(world["board"], world["bob"]) as bridge:
        yield bridge


def alice_writes_document(
    world: dict[str, Any], project: str, document_id: str, markdown: str = "text"
) -> Any:
    """alice creates a document in ``project`` (outside the bridge); its revision."""

    def create() -> str:
        return project_knowledge_create(
            target=Target(user=world["alice"], project_id=world[project].id),
            title=document_id,
            markdown=markdown,
            document_id=document_id,
            provenance=SOURCE,
        ).revision

    return database_sync_to_async(create)()


def alice_writes_kv(world: dict[str, Any], project: str, key: str) -> Any:
    return database_sync_to_async(project_kv_set)(
        target=Target(user=world["alice"], project_id=world[project].id),
        key=key,
        value=1,
        provenance=SOURCE,
    )


def result(reply: dict[str, Any]) -> Any:
    assert reply["ok"], reply
    return reply["result"]


# --- the seven ops -------------------------------------------------------------------------


async def test_the_board_manages_its_own_knowledge_base(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    bridge = bob_on_board
    created = result(
        await bridge.call(
            "knowledge.create", value={"title": "Runbook", "markdown": "one\nPersistent\nthree\n"}
        )
    )
    document_id = created["id"]
    assert created["title"] == "Runbook" and created["revision"]

    listed = result(await bridge.call("knowledge.list"))
    assert [d["id"] for d in listed["documents"]] == [document_id]
    assert listed["total"] == 1 and listed["nextCursor"] is None
    got = result(await bridge.call("knowledge.get", key=document_id))
    assert got["markdown"] == "one\nPersistent\nthree\n"

    edited = result(
        await bridge.call("knowledge.edit", key=document_id, value={"title": "Ops runbook"})
    )
    assert edited["title"] == "Ops runbook" and edited["revision"] != created["revision"]
    hits = result(
        await bridge.call(
            "knowledge.search", value={"query": "persistent", "beforeLines": 1, "afterLines": 1}
        )
    )
    assert hits["results"][0]["before"] == ["one"] and hits["results"][0]["after"] == ["three"]
    lines = result(
        await bridge.call("knowledge.readLines", key=document_id, value={"start": 2, "end": 3})
    )
    assert lines["lines"] == ["Persistent", "three"]

    assert result(await bridge.call("knowledge.delete", key=document_id)) == {"deleted": True}
    assert result(await bridge.call("knowledge.delete", key=document_id)) == {"deleted": False}
    gone = await bridge.call("knowledge.get", key=document_id)
    assert gone["error"]["code"] == "not_found"


async def test_bridge_writes_record_the_bridge_page_and_user(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    result(
        await bob_on_board.call(
            "knowledge.create", key="notes", value={"title": "N", "markdown": ""}
        )
    )
    body = await database_sync_to_async(kv_get)(
        dataset=Dataset(world["board"].id, "persistentValue"), key="knowledge.document.notes"
    )
    assert body.source["via"] == "bridge"
    assert body.source["page"] == f"/boards/{world['board'].id}/"
    assert body.source["user"] == "bob"


async def test_a_plugin_writes_and_reads_a_related_projects_documents(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    created = result(
        await bob_on_board.call(
            "knowledge.create", alias="wiki", value={"title": "From the board", "markdown": "hi"}
        )
    )
    got = result(await bob_on_board.call("knowledge.get", alias="wiki", key=created["id"]))
    assert got["markdown"] == "hi"
    body = await database_sync_to_async(kv_get)(
        dataset=Dataset(world["wiki"].id, "persistentValue"),
        key=f"knowledge.document.{created['id']}",
    )
    assert (body.source["alias"], body.source["consumerProject"]) == (
        "wiki",
        str(world["board"].id),
    )
    own = await bob_on_board.call("knowledge.get", key=created["id"])
    assert own["error"]["code"] == "not_found", "the board's own knowledge base is separate"


async def test_a_prefix_grant_opens_named_documents_and_refuses_the_index(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await database_sync_to_async(grant_board)(
        world, kv_read=ALL, knowledge_read=RUNBOOKS, knowledge_write=RUNBOOKS
    )
    await alice_writes_document(world, "wiki", "runbook-deploy")
    await alice_writes_document(world, "wiki", "secret")
    got = await bob_on_board.call("knowledge.get", alias="wiki", key="runbook-deploy")
    assert result(got)["id"] == "runbook-deploy"
    named = await bob_on_board.call(
        "knowledge.create", alias="wiki", key="runbook-new", value={"title": "T", "markdown": "m"}
    )
    assert result(named)["id"] == "runbook-new"
    for op, fields in [
        ("knowledge.get", {"key": "secret"}),
        ("knowledge.list", {}),
        ("knowledge.search", {"value": {"query": "text"}}),
        ("knowledge.create", {"value": {"title": "T", "markdown": "m"}}),
        ("knowledge.delete", {"key": "secret"}),
    ]:
        refused = await bob_on_board.call(op, alias="wiki", **fields)
        assert refused["error"]["code"] == "forbidden", op
    listing = await bob_on_board.call("knowledge.list", alias="wiki")
    assert "knowledge.documents" in listing["error"]["message"]


async def test_a_guest_reads_documents_but_cannot_write_them(world: dict[str, Any]) -> None:
    await alice_writes_document(world, "board", "doc")
    communicator, _, _ = await open_bridge(world["board"], world["charlie"])
    bridge = Bridge(communicator)
    assert result(await bridge.call("knowledge.get", key="doc"))["id"] == "doc"
    refused = await bridge.call("knowledge.edit", key="doc", value={"title": "x"})
    assert refused["error"]["code"] == "forbidden"
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("op", "fields", "field"),
    [
        ("knowledge.get", {}, "key"),
        ("knowledge.readLines", {"value": {"start": 1}}, "key"),
        ("knowledge.list", {"key": "doc"}, "key"),
        ("knowledge.list", {"value": {"cursor": "x", "limit": 5}}, "limit"),
        ("knowledge.create", {"value": {"title": "T"}}, "markdown"),
        ("knowledge.create", {"value": ["T", "m"]}, "value"),
        ("knowledge.search", {"value": {}}, "query"),
        ("knowledge.search", {"value": {"query": "x", "beforeLines": "2"}}, "beforeLines"),
        ("knowledge.get", {"key": "no spaces"}, "documentId"),
        ("knowledge.readLines", {"key": "doc", "value": {"start": 0}}, "start"),
    ],
)
async def test_bad_knowledge_arguments_are_invalid_argument(
    bob_on_board: Bridge, world: dict[str, Any], op: str, fields: dict[str, Any], field: str
) -> None:
    await alice_writes_document(world, "board", "doc")
    reply = await bob_on_board.call(op, **fields)
    assert reply["error"]["code"] == "invalid_argument"
    assert reply["error"].get("field") == field


# --- revision events -----------------------------------------------------------------------


async def test_the_current_project_hears_one_event_per_document_write(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    assert result(await bob_on_board.call("subscribe"))
    revision = await alice_writes_document(world, "board", "doc")
    assert await bob_on_board.event() == {
        "v": 1,
        "event": "revision",
        "alias": None,
        "revision": revision,
    }
    assert await bob_on_board.no_message(), "index, page and locator writes are not events"


async def test_document_writes_follow_the_knowledge_rule_and_never_the_kv_rule(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    # KV read everything, knowledge read runbooks only.
    await database_sync_to_async(grant_board)(world, kv_read=ALL, knowledge_read=RUNBOOKS)
    assert result(await bob_on_board.call("subscribe", alias="wiki"))
    await alice_writes_document(world, "wiki", "secret")
    revision = await alice_writes_document(world, "wiki", "runbook-deploy")
    assert (await bob_on_board.event())["revision"] == revision
    assert await bob_on_board.no_message()
    # Raw PersistentValue writes outside the knowledge keys are not events either.
    await database_sync_to_async(project_kv_set)(
        target=Target(user=world["alice"], project_id=world["wiki"].id, domain="persistentValue"),
        key="runbook-deploy",
        value=1,
        provenance=SOURCE,
    )
    assert await bob_on_board.no_message()


async def test_a_kv_grant_alone_hears_no_document_writes(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await database_sync_to_async(grant_board)(world, kv_read=ALL, knowledge_read=NONE)
    assert result(await bob_on_board.call("subscribe", alias="wiki"))
    await alice_writes_document(world, "wiki", "doc")
    kv_revision = await alice_writes_kv(world, "wiki", "stock:1")
    assert (await bob_on_board.event())["revision"] == kv_revision
    assert await bob_on_board.no_message()


async def test_a_knowledge_grant_alone_subscribes_and_hears_no_kv_writes(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await database_sync_to_async(grant_board)(world, kv_read=NONE, knowledge_read=ALL)
    assert result(await bob_on_board.call("subscribe", alias="wiki"))
    await alice_writes_kv(world, "wiki", "stock:1")
    revision = await alice_writes_document(world, "wiki", "doc")
    assert (await bob_on_board.event())["revision"] == revision
    assert await bob_on_board.no_message()
    read = await bob_on_board.call("get", alias="wiki", key="stock:1")
    assert read["error"]["code"] == "forbidden"


async def test_a_recheck_refreshes_the_knowledge_rule_too(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await database_sync_to_async(grant_board)(world, kv_read=ALL, knowledge_read=ALL)
    await alice_writes_document(world, "wiki", "secret")
    assert result(await bob_on_board.call("subscribe", alias="wiki"))
    await database_sync_to_async(grant_board)(world, kv_read=ALL, knowledge_read=RUNBOOKS)
    await asyncio.sleep(0.3)  # let the re-check finish

    def edit_secret() -> None:
        project_knowledge_edit(
            target=Target(user=world["alice"], project_id=world["wiki"].id),
            document_id="secret",
            markdown="changed",
            provenance=SOURCE,
        )

    await database_sync_to_async(edit_secret)()
    revision = await alice_writes_document(world, "wiki", "runbook-1")
    assert (await bob_on_board.event())["revision"] == revision
    assert await bob_on_board.no_message()


async def test_losing_the_last_read_rule_invalidates_the_subscription(
    bob_on_board: Bridge, world: dict[str, Any]
) -> None:
    await database_sync_to_async(grant_board)(world, kv_read=NONE, knowledge_read=ALL)
    assert result(await bob_on_board.call("subscribe", alias="wiki"))
    await database_sync_to_async(grant_board)(world, kv_read=NONE, knowledge_read=NONE)
    assert await bob_on_board.event() == {
        "v": 1,
        "event": "invalidated",
        "alias": "wiki",
        "code": "forbidden",
    }
    await alice_writes_document(world, "wiki", "doc")
    assert await bob_on_board.no_message()
