"""R3: revocation reaches every live subscription quickly and nothing leaks after it.

Five kinds of revocation (narrow a grant, remove a relationship, downgrade a role, log the
user out, deactivate the user), each against ``SUBSCRIBERS`` subscriptions spread over two
daphne workers sharing PostgreSQL/SQLite and Redis, while an unaffected writer keeps writing.
Measured: time from the revoking commit to each subscription's ``invalidated`` event (p50,
p99, max), and revision events received for writes made after the revoking commit (must be 0).

``KANBAN_R3_SUBSCRIBERS`` sets subscriptions per kind (default 100: 500 in all). The hard
bounds (every subscription invalidated, none later than 5 s, no event after the revoke) are
always asserted; the p99 <= 1 s latency target is asserted with ``KANBAN_R3_STRICT=1`` (the
full run), since CI machines are shared and noisy."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from websockets.asyncio.client import ClientConnection

from kanban.access.events import publish_access_changed
from kanban.access.grant_rules import NONE, Grant, Rule
from kanban.access.memberships import membership_set
from kanban.access.relationships import relationship_declare, relationship_remove
from tests.factories import a_board_and_inventory, users
from tests.kanban.bridge.test_scale_out import redis_layer, redis_reachable
from tests.live import LiveServer, open_board_socket

SUBSCRIBERS = int(os.environ.get("KANBAN_R3_SUBSCRIBERS", "100"))
STRICT = os.environ.get("KANBAN_R3_STRICT") == "1"
KINDS = ["narrow", "remove", "downgrade", "logout", "deactivate"]

pytestmark = [
    pytest.mark.redis,
    pytest.mark.skipif(not redis_reachable(), reason="needs Redis"),
]
__all__ = ["redis_layer"]


def stage(kind: str) -> dict[str, Any]:
    """A consumer board and an inventory; the reader (affected) and a writer (not)."""
    reader, writer = users(f"reader-{kind}", f"writer-{kind}")
    board, inventory = a_board_and_inventory(
        names=(f"board {kind}", f"inv {kind}"),
        members={reader: "developer", writer: "developer"},
        grant=Grant(read=Rule("all"), write=Rule("all")),
    )
    cookies = {}
    for name, user in (("reader", reader), ("writer", writer)):
        client = Client()
        client.force_login(user)
        cookies[name] = client.cookies["sessionid"].value
    return {"reader": reader, "board": board, "inventory": inventory, "cookies": cookies}


def revoke(kind: str, scene: dict[str, Any], server: LiveServer) -> None:
    reader, board, inventory = scene["reader"], scene["board"], scene["inventory"]
    if kind == "narrow":
        relationship_declare(
            project=inventory, alias="board", project_id=board.id, grant=Grant(read=NONE)
        )
    elif kind == "remove":
        relationship_remove(project=inventory, alias="board")
    elif kind == "downgrade":
        membership_set(user=reader, project=inventory, role=None)
    elif kind == "logout":
        client = Client()
        client.cookies["sessionid"] = scene["cookies"]["reader"]
        client.post("/accounts/logout/")
    else:
        reader.is_active = False
        reader.save(update_fields=["is_active"])
        publish_access_changed(user_ids={reader.pk})  # what the user admin does


async def open_socket(
    server: LiveServer, scene: dict[str, Any], who: str, board: str = "board"
) -> ClientConnection:
    cookie = f"sessionid={scene['cookies'][who]}"
    return await open_board_socket(server, scene[board].id, cookie, max_queue=None)


async def run_kind(kind: str, servers: list[LiveServer], scene: dict[str, Any]) -> dict[str, Any]:
    readers = [await open_socket(servers[n % 2], scene, "reader") for n in range(SUBSCRIBERS)]
    # The writer works in the inventory itself, untouched by any of the revocations.
    writer = await open_socket(servers[0], scene, "writer", board="inventory")
    for socket in readers:
        await socket.send(json.dumps({"v": 1, "id": 1, "op": "subscribe", "alias": "inventory"}))
    for socket in readers:
        reply = json.loads(await asyncio.wait_for(socket.recv(), 10))
        assert reply.get("ok"), reply
    invalidated_at: dict[int, float] = {}
    late_events: list[Any] = []
    committed = asyncio.Event()
    revoked_at = 0.0
    after_revoke_revisions: set[str] = set()

    received: list[tuple[int, str, bool]] = []  # (reader, revision, after its invalidation)

    async def watch(index: int, socket: ClientConnection) -> None:
        try:
            async for raw in socket:
                message = json.loads(raw)
                if message.get("event") == "invalidated":
                    invalidated_at.setdefault(index, time.monotonic())
                elif message.get("event") == "revision":
                    received.append((index, message["revision"], index in invalidated_at))
        except Exception:
            return

    watchers = [asyncio.create_task(watch(n, s)) for n, s in enumerate(readers)]

    async def write_forever() -> None:
        n = 0
        while True:
            n += 1
            sent_after_commit = committed.is_set()
            await writer.send(
                json.dumps({"v": 1, "id": n, "op": "set", "key": f"stock:{n % 7}", "value": n})
            )
            while True:
                reply = json.loads(await writer.recv())
                if reply.get("id") == n:
                    break
            if sent_after_commit and reply.get("ok"):
                after_revoke_revisions.add(reply["result"]["revision"])
            await asyncio.sleep(0.01)

    writing = asyncio.create_task(write_forever())
    await asyncio.sleep(0.5)
    await database_sync_to_async(revoke)(kind, scene, servers[0])
    revoked_at = time.monotonic()
    committed.set()
    deadline = revoked_at + 5
    while len(invalidated_at) < SUBSCRIBERS and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.5)  # keep writing a while: nothing may reach revoked subscribers
    writing.cancel()
    for task in watchers:
        task.cancel()
    for socket in [*readers, writer]:
        await socket.close()
    # Judged at the end: an event may arrive before the writer has seen its own reply.
    late_events.extend(
        (index, revision)
        for index, revision, after_invalidation in received
        if after_invalidation or revision in after_revoke_revisions
    )
    latencies = sorted(at - revoked_at for at in invalidated_at.values())
    # Which worker each missed socket was on and how it ended (None: still open), so that a
    # failure says where to look.
    missed = [
        (servers[n % 2].port, readers[n].close_code)
        for n in range(SUBSCRIBERS)
        if n not in invalidated_at
    ]
    return {
        "missed": missed,
        "invalidated": len(invalidated_at),
        "p50": statistics.median(latencies) if latencies else None,
        "p99": latencies[int(len(latencies) * 0.99) - 1] if latencies else None,
        "max": latencies[-1] if latencies else None,
        "late": len(late_events),
        "writes_after": len(after_revoke_revisions),
    }


@pytest.mark.long
@pytest.mark.django_db(transaction=True)
async def test_revocation_invalidates_every_subscription_fast_and_nothing_leaks_after(
    live_servers: Callable[..., list[LiveServer]], redis_layer: dict[str, str]
) -> None:
    scenes = {kind: await database_sync_to_async(stage)(kind) for kind in KINDS}
    servers = await database_sync_to_async(live_servers)(2, env=redis_layer)
    results = {}
    for kind in KINDS:
        results[kind] = await run_kind(kind, servers, scenes[kind])
    print(f"\nR3 ({SUBSCRIBERS} subscriptions per kind on 2 workers):")
    for kind, r in results.items():
        print(
            f"  {kind:10} invalidated {r['invalidated']}/{SUBSCRIBERS}  p50 {r['p50']:.3f}s  "
            f"p99 {r['p99']:.3f}s  max {r['max']:.3f}s  writes after revoke {r['writes_after']}"
            f"  events delivered after revoke {r['late']}"
        )
    for kind, r in results.items():
        assert r["invalidated"] == SUBSCRIBERS, (kind, r["missed"])
        assert r["max"] <= 5.0, kind
        if STRICT:
            assert r["p99"] <= 1.0, kind
        assert r["late"] == 0, kind
        assert r["writes_after"] > 0, f"{kind}: the writer kept writing after the revoke"
