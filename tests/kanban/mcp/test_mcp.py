"""Agents over MCP, as one would connect: the MCP SDK's own client over real HTTP to a
daphne worker, with a token from ``create_token``. bob develops on the Board, which reads
the Inventory under the alias ``inventory``."""

from __future__ import annotations

import http.client
import io
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from kanban.access.grant_rules import ALL, Grant
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from kanban.models import ApiToken, Project
from storage import engine
from storage.namespaces import dataset_value
from tests.factories import a_board, a_project, a_relationship, users
from tests.live import HOST, LiveServer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world(transactional_db: None) -> dict[str, Any]:
    alice, bob, carol = users("alice", "bob", "carol")
    board = a_project(name="Board", owner=alice, members={bob: "developer", carol: "guest"})
    inventory = a_project(name="Inventory", owner=alice, members={bob: "developer"})
    a_relationship(
        board,
        inventory,
        a_calls_b="inventory",
        b_calls_a="board",
        a_grants_b=Grant(read=ALL),
        b_grants_a=Grant(read=ALL),
    )
    project_kv_set(
        target=Target(user=alice, project_id=inventory.id),
        key="stock:bolt",
        value=120,
        provenance=Provenance(via="cli"),
    )
    return {"board": board, "inventory": inventory}


def create_token(username: str, *args: str) -> str:
    out = io.StringIO()
    call_command("create_token", username, *args, stdout=out)
    return out.getvalue().strip().splitlines()[-1]


async def token_for(username: str, *args: str) -> str:
    return await sync_to_async(create_token)(username, *args)


async def stored_value(project: Project, key: str) -> Any:
    return await sync_to_async(engine.get_value)(dataset_value(project.id, "kv", key))


@asynccontextmanager
async def connect(server: LiveServer, token: str) -> AsyncIterator[Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with (
        http,
        Client(
            streamable_http_client(f"{server.url}/mcp/", http_client=http), mode="legacy"
        ) as client,
    ):
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> tuple[bool, Any]:
    """(whether it failed, its JSON result)."""
    result = await client.call_tool(tool, arguments)
    (content,) = result.content
    return bool(result.is_error), json.loads(content.text)  # type: ignore[union-attr]


async def test_bob_lists_the_tools_and_uses_kv_with_his_run_and_his_conversations_own_kv(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    token = await token_for("bob", "--project", str(world["board"].id), "--expires", "1h")
    async with connect(live_server, token) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"knowledge_documents", "kv_store", "board_cards"}
        assert tools["kv_store"].input_schema["properties"]["action"]["enum"] == ["get", "set"]

        failed, written = await call(
            client,
            "kv_store",
            action="set",
            key="card:c1",
            value={"title": "From an agent"},
            runId="run-7",
            conversationId="conv-3",
        )
        assert not failed and written["revision"]
        failed, read = await call(
            client, "kv_store", action="get", key="card:c1", conversationId="conv-3"
        )
        assert read == {
            "found": True,
            "value": {"title": "From an agent"},
            "revision": written["revision"],
            # An agent's write: who, through what and in which run and conversation.
            "source": {"user": "bob", "via": "mcp", "runId": "run-7", "conversationId": "conv-3"},
        }
        # The conversation's KV is its own dataset (seed 000): the project's has no card:c1.
        assert await call(client, "kv_store", action="get", key="card:c1") == (
            False,
            {"found": False},
        )
        failed, absent = await call(client, "kv_store", action="get", key="card:none")
        assert (failed, absent) == (False, {"found": False})
        failed, related = await call(
            client, "kv_store", action="get", key="stock:bolt", alias="inventory"
        )
        assert (failed, related["value"]) == (False, 120)

    stored = await sync_to_async(engine.get_value)(
        dataset_value(world["board"].id, "kv", "card:c1", "conv-3")
    )
    assert stored is not None and stored.source is not None
    assert stored.source["via"] == "mcp" and stored.source["user"] == "bob"
    assert stored.source["runId"] == "run-7" and stored.source["conversationId"] == "conv-3"
    assert stored.source["token"] == token[:10]


async def test_knowledge_documents_runs_every_action_in_the_v2_format(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    token = await token_for("bob", "--project", str(world["board"].id))
    async with connect(live_server, token) as client:
        failed, made = await call(
            client,
            "knowledge_documents",
            action="create",
            id="conv-1",
            title="Notes",
            markdown="# Notes\nbolts are low\nbuy more",
        )
        assert not failed and made["id"] == "conv-1"
        _, listed = await call(client, "knowledge_documents", action="list")
        assert [d["id"] for d in listed["documents"]] == ["conv-1"]
        _, got = await call(client, "knowledge_documents", action="get", id="conv-1")
        assert got["markdown"] == "# Notes\nbolts are low\nbuy more" and got["title"] == "Notes"
        _, edited = await call(
            client, "knowledge_documents", action="edit", id="conv-1", title="Stock notes"
        )
        assert edited["title"] == "Stock notes"
        _, found = await call(client, "knowledge_documents", action="search", query="bolts")
        assert [hit["documentId"] for hit in found["results"]] == ["conv-1"]
        _, lines = await call(
            client, "knowledge_documents", action="read_lines", id="conv-1", start=2, end=3
        )
        assert lines["lines"] == ["bolts are low", "buy more"]
        failed, refused = await call(client, "knowledge_documents", action="create", title="x")
        assert failed and refused["code"] == "invalid_argument"
        _, deleted = await call(client, "knowledge_documents", action="delete", id="conv-1")
        assert deleted == {"deleted": True}


async def test_outside_its_grant_its_scope_or_its_role_a_call_is_refused(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    bob = await token_for("bob", "--project", str(world["board"].id))
    async with connect(live_server, bob) as client:
        failed, refused = await call(
            client, "kv_store", action="set", key="stock:bolt", value=0, alias="inventory"
        )
        assert failed and refused["code"] == "forbidden"
        failed, refused = await call(client, "kv_store", action="get", key="k", alias="payroll")
        assert failed and refused["code"] == "unknown_alias"
        failed, refused = await call(
            client, "knowledge_documents", action="list", alias="inventory"
        )
        assert failed and refused["code"] == "forbidden"  # a KV grant opens no Knowledge
        failed, refused = await call(client, "kv_store", action="delete", key="k")
        assert failed and refused["code"] == "invalid_argument"

    read_only = await token_for("bob", "--project", str(world["board"].id), "--scope", "read")
    async with connect(live_server, read_only) as client:
        failed, refused = await call(client, "kv_store", action="set", key="k", value=1)
        assert failed and refused == {"code": "forbidden", "message": "this token is read-only"}
        assert (await call(client, "kv_store", action="get", key="k"))[1] == {"found": False}

    # carol's token may write, but carol is a guest: her role still applies.
    carol = await token_for("carol", "--project", str(world["board"].id))
    async with connect(live_server, carol) as client:
        failed, refused = await call(client, "kv_store", action="set", key="k", value=1)
        assert failed and refused["code"] == "forbidden"
    assert await stored_value(world["board"], "k") is None


async def test_revoking_the_token_ends_access_at_the_next_call(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    token = await token_for("bob", "--project", str(world["board"].id))
    async with connect(live_server, token) as client:
        assert not (await call(client, "kv_store", action="get", key="k"))[0]
        await sync_to_async(call_command)("revoke_token", token, stdout=io.StringIO())
        with pytest.raises(Exception, match="bearer token"):
            await call(client, "kv_store", action="get", key="k")


def test_an_unscoped_or_unknown_token_and_other_methods_are_refused_over_plain_http(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    def post(token: str | None, body: Any, **headers: str) -> tuple[int, Any]:
        request = urllib.request.Request(
            f"{live_server.url}/mcp/",
            data=json.dumps(body).encode(),
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **headers,
            },
        )
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request) as response:
                text = response.read()
                return response.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert post(None, ping)[0] == 401
    assert post("kb_nope", ping)[0] == 401
    unscoped = create_token("bob")
    status, body = post(unscoped, ping)
    assert status == 403 and "--project" in body["error"]["message"]
    scoped = create_token("bob", "--project", str(world["board"].id))
    assert post(scoped, ping) == (200, {"jsonrpc": "2.0", "id": 1, "result": {}})
    assert post(scoped, {"jsonrpc": "2.0", "method": "notifications/initialized"}) == (202, None)
    assert (
        post(scoped, {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"})[1]["error"]["code"]
        == -32601
    )
    assert post(scoped, ping, Origin="https://evil.example")[0] == 403
    expired = create_token("bob", "--project", str(world["board"].id), "--expires", "1h")
    ApiToken.objects.filter(prefix=expired[:10]).update(expires_at=timezone.now())
    assert post(expired, ping)[0] == 401
    with pytest.raises(urllib.error.HTTPError) as got:
        urllib.request.urlopen(f"{live_server.url}/mcp/")
    assert got.value.code == 405


async def test_the_newest_client_negotiates_the_newest_protocol_the_sdk_speaks(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    """The official client in its default mode discovers the server; with the SDK serving
    /mcp/ that is the stateless 2026-07-28 revision. An older client still gets the
    handshake revision it asks for."""
    token = await token_for("bob", "--project", str(world["board"].id))
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with (
        http,
        Client(streamable_http_client(f"{live_server.url}/mcp/", http_client=http)) as c,
    ):
        assert c.protocol_version == LATEST_MODERN_VERSION == "2026-07-28"
        assert {tool.name for tool in (await c.list_tools()).tools} >= {"kv_store"}
        assert (await call(c, "kv_store", action="get", key="k")) == (False, {"found": False})
    async with connect(live_server, token) as legacy:
        assert legacy.protocol_version == LATEST_HANDSHAKE_VERSION


def raw_post(server: LiveServer, body: bytes, **headers: str) -> tuple[int, Any]:
    connection = http.client.HTTPConnection(HOST, server.port, timeout=10)
    connection.request(
        "POST",
        "/mcp/",
        body=body,
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    response = connection.getresponse()
    text = response.read()
    connection.close()
    return response.status, json.loads(text) if text else None


def test_a_forged_host_another_origin_and_malformed_bodies_get_json_rpc_errors(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    token = create_token("bob", "--project", str(world["board"].id))
    auth = {"Authorization": f"Bearer {token}"}
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    own = f"http://{HOST}:{live_server.port}"
    assert raw_post(live_server, ping, Origin=own, **auth)[0] == 200
    # DNS rebinding: a name that is not one of ALLOWED_HOSTS is refused before anything runs.
    status, body = raw_post(live_server, ping, Host="rebound.evil.example", **auth)
    assert status == 421 and body["error"]["code"] == -32600
    # The whole origin is compared: the same host on another port or scheme is another site.
    for other in (f"http://{HOST}:9999", f"https://{HOST}:{live_server.port}", "null"):
        assert raw_post(live_server, ping, Origin=other, **auth)[0] == 403, other
    # Bodies the project's codec refuses are JSON-RPC parse errors, never an HTML 500.
    for bad in (b"[" * 3000, b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}', b"\xff"):
        status, body = raw_post(live_server, bad, **auth)
        assert status == 400 and body == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "the body is not JSON"},
        }
    nested = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}})
    deep = nested.replace("{}", "[" * 100 + "]" * 100).encode()
    assert raw_post(live_server, deep, **auth)[1]["error"]["code"] == -32700
    assert raw_post(live_server, b"[]", **auth)[1]["error"]["code"] == -32600


def test_mcp_reads_the_bearer_header_as_rest_does(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    token = create_token("bob", "--project", str(world["board"].id))
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    for header in (f"Bearer {token} extra", "Bearer", f"bearer {token}x", "Bearer \xe9"):
        status, body = raw_post(live_server, ping, Authorization=header)
        assert status == 401 and body["error"]["code"] == -32001, header
    assert raw_post(live_server, ping, Authorization=f"bearer {token}")[0] == 200


async def test_kv_store_writes_over_the_revision_it_read_or_says_conflict_with_the_current(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    token = await token_for("bob", "--project", str(world["board"].id))
    async with connect(live_server, token) as client:
        _, first = await call(
            client, "kv_store", action="set", key="k", value=1, expectedRevision=None
        )
        failed, refused = await call(
            client, "kv_store", action="set", key="k", value=2, expectedRevision=None
        )
        assert failed and refused["code"] == "conflict"
        assert refused["current"] == {"found": True, "value": 1, "revision": first["revision"]}
        failed, written = await call(
            client, "kv_store", action="set", key="k", value=2, expectedRevision=first["revision"]
        )
        assert not failed
        failed, stale = await call(
            client, "kv_store", action="set", key="k", value=3, expectedRevision=first["revision"]
        )
        assert failed and stale["current"]["value"] == 2
        got = await call(client, "kv_store", action="get", key="k")
        assert got == (
            False,
            {
                "found": True,
                "value": 2,
                "revision": written["revision"],
                "source": {"user": "bob", "via": "mcp"},
            },
        )


async def test_board_cards_refuses_a_project_whose_plugin_is_not_the_board(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    token = await token_for("bob", "--project", str(world["board"].id))
    async with connect(live_server, token) as client:
        failed, refused = await call(client, "board_cards", action="list")
        assert failed and refused["code"] == "invalid_argument"
        assert "not the built-in Board" in refused["message"]
        failed, refused = await call(client, "board_cards", action="list", alias="inventory")
        assert failed and refused == {
            "code": "invalid_argument",
            "message": "board_cards takes no 'alias'",
            "field": "alias",
        }


async def test_an_agent_cannot_rewrite_the_owners_comment_on_a_board(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    alice, bob = await sync_to_async(
        lambda: (User.objects.get(username="alice"), User.objects.get(username="bob"))
    )()
    board = await sync_to_async(a_board)(owner=alice, members={bob: "developer"})
    said = {"id": "a1", "author": "alice", "text": "Not yet.", "at": "2026-12-01", "edited": None}
    await sync_to_async(project_kv_set)(
        target=Target(user=alice, project_id=board.id),
        key="comments:c1",
        value=[said],
        provenance=Provenance(via="cli"),
    )
    token = await token_for("bob", "--project", str(board.id))
    async with connect(live_server, token) as client:
        forged = {**said, "author": "bob", "text": "Approved, ship it."}
        failed, refused = await call(
            client, "kv_store", action="set", key="comments:c1", value=[forged]
        )
        assert failed and refused["code"] == "forbidden"
        mine = {**said, "id": "b1", "author": "bob", "text": "From an agent."}
        failed, _ = await call(
            client, "kv_store", action="set", key="comments:c1", value=[said, mine]
        )
        assert not failed
    assert (await stored_value(board, "comments:c1")).value == [said, mine]


async def test_an_agent_dates_a_card_on_a_board_nobody_opened_then_clears_the_date_with_null(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    alice, bob = await sync_to_async(
        lambda: (User.objects.get(username="alice"), User.objects.get(username="bob"))
    )()
    board = await sync_to_async(a_board)(owner=alice, members={bob: "developer"})
    token = await token_for("bob", "--project", str(board.id))
    async with connect(live_server, token) as client:
        failed, card = await call(
            client, "board_cards", action="add", title="Ship", column="todo", due="2027-01-31"
        )
        assert not failed and card["due"] == "2027-01-31", card
        failed, cleared = await call(
            client,
            "board_cards",
            action="update",
            id=card["id"],
            revision=card["revision"],
            due=None,
            title=None,  # a client that sends every field: null where it means "not this one"
        )
        assert not failed and cleared["due"] is None and cleared["title"] == "Ship", cleared
        for impossible in ("2027-13-45", "2027-02-30"):
            failed, refused = await call(
                client, "board_cards", action="add", title="x", column="todo", due=impossible
            )
            assert failed and (refused["code"], refused["field"]) == ("invalid_argument", "due")
        failed, listed = await call(client, "board_cards", action="list")
        assert [c["id"] for c in listed["cards"]] == [card["id"]], "nothing else was stored"


async def test_an_agent_comments_and_keeps_a_checklist_through_board_cards(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    alice, bob = await sync_to_async(
        lambda: (User.objects.get(username="alice"), User.objects.get(username="bob"))
    )()
    board = await sync_to_async(a_board)(owner=alice, members={bob: "developer"})
    token = await token_for("bob", "--project", str(board.id))
    async with connect(live_server, token) as client:
        _, card = await call(client, "board_cards", action="add", title="Ship", column="todo")
        failed, said = await call(
            client, "board_cards", action="comment", id=card["id"], text="On it."
        )
        assert not failed and said["comment"]["author"] == "bob" and said["commentCount"] == 1
        _, added = await call(
            client, "board_cards", action="checklist_add", id=card["id"], text="Tag it"
        )
        [item] = added["checklist"]
        failed, ticked = await call(
            client,
            "board_cards",
            action="checklist_tick",
            id=card["id"],
            item=item["id"],
            done=True,
        )
        assert not failed and ticked["checklist"] == [{**item, "done": True}]
        assert ticked["commentCount"] == 1
        failed, edited = await call(
            client,
            "board_cards",
            action="comment_edit",
            id=card["id"],
            comment=said["comment"]["id"],
            text="Done.",
        )
        assert not failed and edited["comment"]["text"] == "Done."
        failed, review = await call(client, "board_cards", action="column_add", title="Review")
        assert not failed and [c["title"] for c in review["columns"]][-1] == "Review"
    comments = await stored_value(board, f"comments:{card['id']}")
    assert comments.value == [edited["comment"]] and comments.source["via"] == "mcp"


async def test_an_agent_builds_a_card_in_one_call_then_reads_its_history_and_restores_it(
    world: dict[str, Any], live_server: LiveServer
) -> None:
    """Over the MCP endpoint, as a client sees it: a board nobody opened, one add with a
    checklist of five, labels, assignees and a comment, a tick and a move, then the card's
    history and a restore of its first version over the revision read."""
    alice, bob = await sync_to_async(
        lambda: (User.objects.get(username="alice"), User.objects.get(username="bob"))
    )()
    board = await sync_to_async(a_board)(owner=alice, members={bob: "developer"})
    token = await token_for("bob", "--project", str(board.id), "--name", "triage-bot")
    async with connect(live_server, token) as client:
        failed, card = await call(
            client,
            "board_cards",
            action="add",
            title="Release",
            column="todo",
            checklist=["Freeze", "Tag", "Build", "Publish", "Announce"],
            labels=["release"],
            assignees=["alice", "bob"],
            text="From the template.",
        )
        assert not failed, card
        assert len(card["checklist"]) == 5 and card["commentCount"] == 1
        first = card["checklist"][0]["id"]
        _, ticked = await call(
            client, "board_cards", action="checklist_tick", id=card["id"], item=first, done=True
        )
        _, moved = await call(client, "board_cards", action="move", id=card["id"], column="doing")
        failed, history = await call(client, "board_cards", action="history", id=card["id"])
        assert not failed and [v["revision"] for v in history["versions"]] == [
            moved["revision"],
            ticked["revision"],
            card["revision"],
        ]
        assert {v["agent"] for v in history["versions"]} == {"triage-bot"}
        failed, stale = await call(
            client,
            "board_cards",
            action="restore_version",
            id=card["id"],
            version=card["revision"],
            revision=ticked["revision"],
        )
        assert failed and stale["code"] == "conflict"
        failed, restored = await call(
            client,
            "board_cards",
            action="restore_version",
            id=card["id"],
            version=card["revision"],
            revision=moved["revision"],
        )
        assert not failed and restored["column"] == "todo"
        assert not any(item["done"] for item in restored["checklist"])
    stored = await stored_value(board, f"card:{card['id']}")
    assert stored.source["restoredFrom"] == card["revision"]
