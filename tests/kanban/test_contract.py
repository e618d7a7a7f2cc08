"""The contract between the ways in: the same KV actions through REST, the bridge (a real
websocket through the ASGI stack) and MCP (the kv_store tool, as the MCP endpoint runs it)
store the same values and refuse with the same codes, so the three can never drift apart.

alice owns a Board and an Inventory; the Inventory grants the Board read of its ``stock:``
keys and no write. bob develops on the Board, charlie is a guest on it. Each transport
writes its own key (``contract:rest`` ...) through the same script, and what each stored and
each answer's code are compared across all three. A card's copy or move to another board
is compared across all three too (MCP's board_cards copy_to_board, move_to_board); a search
across boards between REST and MCP (the bridge has none). A KV delete is REST's alone (the
bridge has no delete op, MCP's kv_store gets and sets), so it has no contract to keep here.

Each transport keeps only its own mapping: REST answers an absent key's read 404 not_found
where the bridge and MCP answer ``{found: false}``; both are read here as "absent"."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Protocol
from urllib.parse import quote

import pytest
from channels.db import database_sync_to_async
from rest_framework.test import APIClient

from kanban.access.grant_rules import Grant, Rule
from kanban.accounts.tokens import token_create
from kanban.data.board import layout
from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from kanban.data.target import Target
from kanban.mcp.tools import tool_result
from kanban.models import Project
from storage import engine, limits
from storage.namespaces import project_kv
from tests.factories import a_board, a_board_and_inventory, board_data, users
from tests.kanban.bridge.helpers import Bridge, open_bridge

pytestmark = pytest.mark.django_db(transaction=True)

ABSENT: Any = object()
#: What an answer is compared by: ("ok", what it carries that all three share) or
#: ("error", code).
Outcome = tuple[str, Any]
OMITTED = object()


class Transport(Protocol):
    name: str

    async def get(self, key: str, *, alias: str | None = None) -> Outcome: ...

    async def set(
        self, key: str, value: Any, *, expected: Any = OMITTED, alias: str | None = None
    ) -> Outcome: ...


def _read(found: bool, value: Any = None) -> Outcome:
    return ("ok", {"found": True, "value": value} if found else {"found": False})


class Rest:
    name = "rest"

    def __init__(self, user: Any, project: Project) -> None:
        self.client = APIClient()
        self.client.force_login(user)
        self.project = project
        self.revisions: dict[str, str] = {}

    def _url(self, key: str, alias: str | None) -> str:
        where = f"related/{alias}/" if alias is not None else ""
        return f"/api/v1/projects/{self.project.id}/{where}kv/{quote(key, safe='')}"

    @staticmethod
    def _refused(response: Any) -> Outcome:
        return ("error", response.json()["code"])

    async def get(self, key: str, *, alias: str | None = None) -> Outcome:
        response = await database_sync_to_async(self.client.get)(self._url(key, alias))
        if response.status_code == 404 and response.json()["code"] == "not_found":
            return _read(False)
        if response.status_code != 200:
            return self._refused(response)
        return _read(True, response.json()["value"])

    async def revision(self, key: str) -> str:
        response = await database_sync_to_async(self.client.get)(self._url(key, None))
        return str(response.json()["revision"])

    async def set(
        self, key: str, value: Any, *, expected: Any = OMITTED, alias: str | None = None
    ) -> Outcome:
        body: dict[str, Any] = {"value": value}
        if expected is not OMITTED:
            body["expectedRevision"] = expected
        response = await database_sync_to_async(self.client.put)(
            self._url(key, alias), data=json.dumps(body), content_type="application/json"
        )
        if response.status_code != 200:
            return self._refused(response)
        return ("ok", "written")

    async def delete(self, key: str) -> Outcome:
        response = await database_sync_to_async(self.client.delete)(self._url(key, None))
        if response.status_code != 200:
            return self._refused(response)
        return ("ok", response.json())


class Socket:
    name = "bridge"

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge

    @staticmethod
    def _outcome(answer: dict[str, Any]) -> Outcome:
        if not answer["ok"]:
            return ("error", answer["error"]["code"])
        return ("ok", answer["result"])

    async def get(self, key: str, *, alias: str | None = None) -> Outcome:
        answer = await self.bridge.call("get", key=key, **_alias(alias))
        if not answer["ok"]:
            return self._outcome(answer)
        result = answer["result"]
        return _read(result["found"], result.get("value"))

    async def set(
        self, key: str, value: Any, *, expected: Any = OMITTED, alias: str | None = None
    ) -> Outcome:
        fields = {} if expected is OMITTED else {"expectedRevision": expected}
        answer = await self.bridge.call("set", key=key, value=value, **fields, **_alias(alias))
        return self._outcome(answer) if not answer["ok"] else ("ok", "written")

    async def delete(self, key: str) -> Outcome:
        return self._outcome(await self.bridge.call("delete", key=key))


class Mcp:
    name = "mcp"

    def __init__(self, token: Any) -> None:
        self.token = token

    async def _call(self, **arguments: Any) -> tuple[bool, Any]:
        return await database_sync_to_async(tool_result)(
            token=self.token, name="kv_store", arguments=arguments
        )

    async def get(self, key: str, *, alias: str | None = None) -> Outcome:
        failed, value = await self._call(action="get", key=key, **_alias(alias))
        if failed:
            return ("error", value["code"])
        return _read(value["found"], value.get("value"))

    async def set(
        self, key: str, value: Any, *, expected: Any = OMITTED, alias: str | None = None
    ) -> Outcome:
        fields = {} if expected is OMITTED else {"expectedRevision": expected}
        failed, answer = await self._call(
            action="set", key=key, value=value, **fields, **_alias(alias)
        )
        return ("error", answer["code"]) if failed else ("ok", "written")


def _alias(alias: str | None) -> dict[str, str]:
    return {} if alias is None else {"alias": alias}


@pytest.fixture
def world(transactional_db: None) -> dict[str, Any]:
    alice, bob, charlie = users("alice", "bob", "charlie")
    stock = Rule("prefixes", ("stock:",))
    board, inventory = a_board_and_inventory(
        owner=alice,
        members={bob: "developer", charlie: "guest"},
        grant=Grant(read=stock, write=Rule("none")),
    )
    project_kv_set(
        target=Target(user=alice, project_id=inventory.id),
        key="stock:bolt",
        value=12,
        provenance=Provenance(via="api"),
    )
    return {"alice": alice, "bob": bob, "charlie": charlie, "board": board, "inv": inventory}


async def transports_for(world: dict[str, Any], who: str, opened: list[Any]) -> list[Any]:
    user, board = world[who], world["board"]
    communicator, connected, _ = await open_bridge(board, user)
    assert connected
    opened.append(communicator)
    token, _ = await database_sync_to_async(token_create)(user=user, project_id=board.id)
    rest = await database_sync_to_async(Rest)(user, board)
    return [rest, Socket(Bridge(communicator)), Mcp(token)]


@pytest.fixture
async def sockets() -> AsyncIterator[list[Any]]:
    opened: list[Any] = []
    yield opened
    for communicator in opened:
        await communicator.disconnect()


def stored(world: dict[str, Any], key: str) -> Any:
    entry = project_kv_get(
        target=Target(user=world["alice"], project_id=world["board"].id), key=key
    )
    return ABSENT if entry is None else entry.value


async def revision_of(world: dict[str, Any], key: str) -> str:
    entry = await database_sync_to_async(project_kv_get)(
        target=Target(user=world["alice"], project_id=world["board"].id), key=key
    )
    assert entry is not None
    return entry.revision


def same_for_all(outcomes: dict[str, Any]) -> Any:
    """The one outcome every transport gave; a difference fails naming each one's."""
    assert len({json.dumps(o, sort_keys=True, default=str) for o in outcomes.values()}) == 1, (
        outcomes
    )
    return next(iter(outcomes.values()))


async def test_kv_compare_and_set_and_its_conflict_are_one_contract(
    world: dict[str, Any], sockets: list[Any]
) -> None:
    transports = await transports_for(world, "bob", sockets)
    script: list[tuple[str, Outcome]] = []

    async def each(step: str, run: Any) -> Any:
        outcomes = {t.name: await run(t, f"contract:{t.name}") for t in transports}
        outcome = same_for_all(outcomes)
        script.append((step, outcome))
        return outcome

    assert await each("read absent", lambda t, k: t.get(k)) == ("ok", {"found": False})
    assert await each("create only", lambda t, k: t.set(k, {"n": 1}, expected=None)) == (
        "ok",
        "written",
    )
    assert await each("create again", lambda t, k: t.set(k, {"n": 9}, expected=None)) == (
        "error",
        "conflict",
    )
    firsts = {t.name: await revision_of(world, f"contract:{t.name}") for t in transports}

    async def over_first(t: Any, key: str) -> Outcome:
        return await t.set(key, {"n": 2}, expected=firsts[t.name])

    assert await each("over the revision read", over_first) == ("ok", "written")
    assert await each("over a stale revision", over_first) == ("error", "conflict")
    assert await each("read back", lambda t, k: t.get(k)) == (
        "ok",
        {"found": True, "value": {"n": 2}},
    )
    assert await each("blind write", lambda t, k: t.set(k, [1, "two", None])) == (
        "ok",
        "written",
    )
    values = {
        t.name: await database_sync_to_async(stored)(world, f"contract:{t.name}")
        for t in transports
    }
    assert same_for_all(values) == [1, "two", None]


async def test_refusals_carry_the_same_code_whichever_way_in(
    world: dict[str, Any], sockets: list[Any]
) -> None:
    bobs = await transports_for(world, "bob", sockets)
    guests = await transports_for(world, "charlie", sockets)
    too_long = "k" * (limits.MAX_KEY_CHARS + 1)
    too_big = "x" * limits.DEFAULT_VALUE_BYTES
    cases = {
        "a key over the limit": (bobs, lambda t: t.set(too_long, 1)),
        "a value over the limit": (bobs, lambda t: t.set(f"big:{t.name}", too_big)),
        "an unknown alias": (bobs, lambda t: t.get("stock:bolt", alias="nobody")),
        "a key the grant does not let read": (bobs, lambda t: t.get("secret", alias="inventory")),
        "a write the grant does not allow": (
            bobs,
            lambda t: t.set("stock:bolt", 0, alias="inventory"),
        ),
        "a guest's write": (guests, lambda t: t.set(f"guest:{t.name}", 1)),
    }
    codes = {}
    for case, (transports, run) in cases.items():
        codes[case] = same_for_all({t.name: await run(t) for t in transports})
    assert codes == {
        "a key over the limit": ("error", "invalid_argument"),
        "a value over the limit": ("error", "too_large"),
        "an unknown alias": ("error", "unknown_alias"),
        "a key the grant does not let read": ("error", "forbidden"),
        "a write the grant does not allow": ("error", "forbidden"),
        "a guest's write": ("error", "forbidden"),
    }
    # Through the grant a read is the same value everywhere, and no refusal wrote anything.
    assert same_for_all({t.name: await t.get("stock:bolt", alias="inventory") for t in bobs}) == (
        "ok",
        {"found": True, "value": 12},
    )
    for name in ("rest", "bridge", "mcp"):
        for key in (f"big:{name}", f"guest:{name}"):
            assert await database_sync_to_async(stored)(world, key) is ABSENT


def transfer_world() -> dict[str, Any]:
    alice, bob, carol = users("alice", "bob", "carol")
    launch = a_board(owner=alice, name="Launch", members={bob: "developer", carol: "guest"})
    ops = a_board(owner=alice, name="Ops", members={bob: "developer"})
    press = a_board(owner=alice, name="Press", members={bob: "guest"})
    mine = a_board(owner=carol, name="Carol's")
    board_data(ops, cards={"o1": {"title": "Login outage runbook"}})
    board_data(
        launch,
        cards={
            "c1": {"title": "Broken login", "labels": ["bug"], "column": "doing"},
            "c2": {"title": "Press kit"},
            "c3": {"title": "Launch post"},
            "c4": {"title": "Release notes"},
            "c5": {"title": "Launch checklist"},
        },
    )
    # Tokens naming every board each may reach, so that only roles decide, as for a session.
    bob_token, _ = token_create(user=bob, project_id=launch.id, more_project_ids=[ops.id, press.id])
    carol_token, _ = token_create(user=carol, project_id=launch.id, more_project_ids=[mine.id])
    return {
        "bob": bob,
        "carol": carol,
        "launch": launch,
        "ops": ops,
        "press": press,
        "mine": mine,
        "tokens": {"bob": bob_token, "carol": carol_token},
    }


class RestCards:
    name = "rest"

    def __init__(self, user: Any, board: Project) -> None:
        self.client = APIClient()
        self.client.force_login(user)
        self.board = board

    async def transfer(self, op: str, card: str, body: dict[str, Any]) -> Outcome:
        url = f"/api/v1/projects/{self.board.id}/cards/{card}/{op}"
        response = await database_sync_to_async(self.client.post)(
            url, data=json.dumps(body), content_type="application/json"
        )
        answer = response.json()
        return ("ok", answer) if response.status_code == 201 else ("error", answer["code"])


class SocketCards:
    name = "bridge"

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge

    async def transfer(self, op: str, card: str, body: dict[str, Any]) -> Outcome:
        answer = await self.bridge.call(f"cards.{op}", key=card, value=body)
        return ("ok", answer["result"]) if answer["ok"] else ("error", answer["error"]["code"])


class McpCards:
    name = "mcp"

    def __init__(self, token: Any) -> None:
        self.token = token

    async def board_cards(self, **arguments: Any) -> Outcome:
        failed, answer = await database_sync_to_async(tool_result)(
            token=self.token, name="board_cards", arguments=arguments
        )
        return ("error", answer["code"]) if failed else ("ok", answer)

    async def transfer(self, op: str, card: str, body: dict[str, Any]) -> Outcome:
        arguments = {
            "board": body["targetProject"],
            **({"column": body["column"]} if "column" in body else {}),
        }
        return await self.board_cards(action=f"{op}_to_board", id=card, **arguments)

    async def search(self, **query: Any) -> Outcome:
        if "q" in query:
            query["text"] = query.pop("q")
        if "cursor" in query:
            query["cursor"] = str(query["cursor"])
        outcome, answer = await self.board_cards(action="search", **query)
        if outcome == "ok" and answer["cursor"] is not None:
            answer = {**answer, "cursor": int(answer["cursor"])}  # MCP's cursors are text
        return outcome, answer


def card_on(board: Project, card_id: str) -> Any:
    """The card as the Board shows it, its own id and rank aside (each copy gets new ones)."""
    entry = engine.get_value(project_kv(board.id, layout.card_key(card_id)))
    card = None if entry is None else layout.normalize_card(card_id, entry.value)
    return None if card is None else {k: v for k, v in card.items() if k not in ("id", "rank")}


async def test_a_card_copied_or_moved_over_rest_or_the_bridge_lands_the_same(
    transactional_db: None, sockets: list[Any]
) -> None:
    """A card's copy or move to another board, offered by REST, the bridge and MCP's
    board_cards: the same copy or move stores the same card on the target, and the same
    refusals carry the same codes."""
    world = await database_sync_to_async(transfer_world)()
    launch, ops = world["launch"], world["ops"]

    async def both(who: str) -> list[Any]:
        communicator, connected, _ = await open_bridge(launch, world[who])
        assert connected
        sockets.append(communicator)
        rest = await database_sync_to_async(RestCards)(world[who], launch)
        return [rest, SocketCards(Bridge(communicator)), McpCards(world["tokens"][who])]

    bobs, carols = await both("bob"), await both("carol")
    to_ops = {"targetProject": str(ops.id)}
    copies = {}
    for t, card in zip(bobs, ("c1", "c1", "c1"), strict=True):
        outcome, answer = await t.transfer("copy", card, to_ops)
        assert outcome == "ok", answer
        copies[t.name] = await database_sync_to_async(card_on)(ops, answer["card"])
    assert same_for_all(copies)["title"] == "Broken login"
    moved = {}
    for t, card in zip(bobs, ("c2", "c3", "c5"), strict=True):
        outcome, answer = await t.transfer("move", card, {**to_ops, "column": "done"})
        assert outcome == "ok", answer
        moved[t.name] = (
            await database_sync_to_async(card_on)(ops, answer["card"]),
            await database_sync_to_async(card_on)(launch, card),
        )
    assert {name: (there["column"], here) for name, (there, here) in moved.items()} == {
        "rest": ("done", None),
        "bridge": ("done", None),
        "mcp": ("done", None),
    }
    cases = {
        "a target that is no board id": (bobs, "copy", "c1", {"targetProject": "ops"}),
        "a card that is not there": (bobs, "copy", "nope", to_ops),
        "a target column it does not have": (bobs, "copy", "c1", {**to_ops, "column": "x"}),
        "a board one is a guest on": (
            bobs,
            "copy",
            "c1",
            {"targetProject": str(world["press"].id)},
        ),
        "a guest's move": (carols, "move", "c4", {"targetProject": str(world["mine"].id)}),
    }
    codes = {
        case: same_for_all({t.name: await t.transfer(op, card, body) for t in transports})
        for case, (transports, op, card, body) in cases.items()
    }
    assert codes == {
        "a target that is no board id": ("error", "invalid_argument"),
        "a card that is not there": ("error", "not_found"),
        "a target column it does not have": ("error", "invalid_argument"),
        "a board one is a guest on": ("error", "forbidden"),
        "a guest's move": ("error", "forbidden"),
    }
    assert await database_sync_to_async(card_on)(launch, "c4") is not None


class RestSearch:
    name = "rest"

    def __init__(self, user: Any) -> None:
        self.client = APIClient()
        self.client.force_login(user)

    async def search(self, **query: Any) -> Outcome:
        response = await database_sync_to_async(self.client.get)("/api/v1/search/cards", query)
        answer = response.json()
        return ("ok", answer) if response.status_code == 200 else ("error", answer["code"])


async def test_a_search_across_boards_answers_the_same_over_rest_and_mcp(
    transactional_db: None,
) -> None:
    """Search is REST's search/cards and MCP's board_cards search (the bridge has none):
    the same results, pages and refusals."""
    world = await database_sync_to_async(transfer_world)()
    rest = await database_sync_to_async(RestSearch)(world["bob"])
    both = [rest, McpCards(world["tokens"]["bob"])]
    queries = {
        "two boards": {"q": "login"},
        "a first page": {"q": "login", "limit": 1},
        "the next page": {"q": "login", "limit": 1, "cursor": 1},
        "nothing": {"q": "zebra"},
        "a blank query": {"q": "  "},
        "a page too long": {"q": "login", "limit": 51},
    }
    outcomes = {
        case: same_for_all({t.name: await t.search(**query) for t in both})
        for case, query in queries.items()
    }
    assert [
        (r["board"]["name"], r["card"]["id"]) for r in outcomes["two boards"][1]["results"]
    ] == [("Launch", "c1"), ("Ops", "o1")]
    assert outcomes["a first page"][1]["cursor"] == 1
    assert outcomes["the next page"][1]["results"][0]["card"]["id"] == "o1"
    assert outcomes["nothing"] == ("ok", {"results": [], "cursor": None})
    assert outcomes["a blank query"] == outcomes["a page too long"] == ("error", "invalid_argument")
