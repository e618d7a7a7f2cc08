"""R9: reconnect storms and a slow consumer leave no subscriber out of step with the database.

``SUBSCRIBERS`` clients connect, subscribe to the board's own KV and to its related project
(``inventory``), read events for a moment and disconnect, in a loop, for ``STORM_SECONDS``
while two bridge writers keep incrementing counters in both projects. Meanwhile one slow
consumer stops reading its socket for ``SLOW_SECONDS`` (small receive buffer, tiny client
queue) so the backlog piles up towards the server.

At the end every subscriber connects once more and does what the SDK does after a reconnect
(subscribe, then re-read), then follows events with debounced re-reads while the writers go
on a little; once they stop, each view must equal the database: 0 divergence. The slow
consumer must have received, in order, every revision of each alias between its first and
last (no silent gap), up to the last write, unless the server told it to resync or
disconnected it. Printed: connect/disconnect cycles, events delivered, divergences, the slow
consumer's events, gaps and outcome, and the worker's memory growth over the slow period.

Runs with one worker on SQLite and the in-memory layer, and with two workers when
``REDIS_URL`` is set (the PostgreSQL + Redis pass). Bounded default: 50 subscribers for 10 s;
full: ``KANBAN_R9_SUBSCRIBERS=200 KANBAN_R9_STORM_SECONDS=30``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import socket
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from websockets.asyncio.client import connect

from tests.live import HOST, LiveServer
from tests.reliability.test_r8_redis_outage import (
    ALIASES,
    Subscriber,
    Writer,
    database_view,
    open_wire,
    stage,
)

SUBSCRIBERS = int(os.environ.get("KANBAN_R9_SUBSCRIBERS", "50"))
STORM_SECONDS = float(os.environ.get("KANBAN_R9_STORM_SECONDS", "10"))
SLOW_SECONDS = float(os.environ.get("KANBAN_R9_SLOW_SECONDS", "5"))
WRITES_PER_SECOND = 40.0
#: Writing on after the final resubscribe, and the longest wait for views to settle.
TAIL_SECONDS, SETTLE_LIMIT = 2.0, 10.0
REDIS_URL = os.environ.get("REDIS_URL", "")
WORKERS = 2 if REDIS_URL else 1

pytestmark = [pytest.mark.slow]


class Storm:
    def __init__(self) -> None:
        self.cycles = 0
        self.events = 0
        self.errors: list[str] = []


async def reconnect_forever(
    n: int, servers: list[LiveServer], scene: dict[str, Any], stop: asyncio.Event, storm: Storm
) -> None:
    rng = random.Random(n)

    def heard(message: dict[str, Any]) -> None:
        storm.events += message.get("event") == "revision"

    while not stop.is_set():
        try:
            wire = await open_wire(servers[(n + storm.cycles) % len(servers)], scene, heard)
            for alias in ALIASES:
                reply = await wire.call("subscribe", **({"alias": alias} if alias else {}))
                if not reply.get("ok"):
                    storm.errors.append(str(reply))
            await asyncio.sleep(rng.uniform(0.1, 0.6))  # reading events meanwhile
            await wire.close()
            storm.cycles += 1
        except Exception as error:  # a refused or dropped connection is a finding
            storm.errors.append(repr(error))


class SlowConsumer:
    """Reads nothing for a while: a tiny receive buffer and client queue push the backlog to
    the server. Records every frame it finally reads, in order."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.closed_by_server: int | None = None

    async def run(self, server: LiveServer, scene: dict[str, Any], resume: asyncio.Event) -> None:
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.connect((HOST, server.port))
        raw.setblocking(False)
        async with connect(
            f"{server.ws_url}/ws/boards/{scene['board'].id}/",
            sock=raw,
            additional_headers=[("Cookie", f"sessionid={scene['cookie']}")],
            origin=server.url,  # type: ignore[arg-type]
            max_queue=2,
        ) as ws:
            for n, alias in enumerate(ALIASES, 1):
                await ws.send(json.dumps({"v": 1, "id": n, "op": "subscribe", "alias": alias}))
            await resume.wait()  # not reading: the server's sends back up
            with contextlib.suppress(Exception):  # however it ends, the frames tell
                async for text in ws:
                    self.frames.append(json.loads(text))
            if ws.close_code is not None and ws.close_code != 1000:
                self.closed_by_server = ws.close_code


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def gaps(received: list[str], acked: list[list[str]]) -> tuple[bool, int]:
    """(each writer's events in its commit order, revisions of a writer acknowledged between
    its first and last received but missing). Concurrent writers on two workers commit and
    publish in any interleaving; revisions are opaque, so only one writer's chain has an
    order. So gaps are counted per chain too: when the subscription began, one worker's
    write could reach the hub before it and another's, committed earlier, after it; that
    earlier revision was never owed, and counting across chains took it for a loss."""
    numbers = [int(r) for r in received]
    in_order = len(set(numbers)) == len(numbers)
    missing = 0
    for chain in acked:
        mine = [int(r) for r in chain]
        ours = [n for n in numbers if n in set(mine)]
        in_order = in_order and ours == sorted(ours)
        if not ours:
            missing += len(mine)
            continue
        owed = {r for r in mine if ours[0] <= r <= max(ours)}
        missing += len(owed - set(ours))
    return in_order, missing


@pytest.mark.long
@pytest.mark.django_db(transaction=True)
async def test_reconnect_storms_and_a_slow_consumer_end_with_no_divergence(
    live_servers: Callable[..., list[LiveServer]], settings: Any
) -> None:
    scene = await database_sync_to_async(stage)("r9")
    env = {"KANBAN_REDIS_PREFIX": f"r9-{uuid.uuid4().hex[:8]}"} if REDIS_URL else {}
    if REDIS_URL:
        settings.CHANNEL_LAYERS = {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {"hosts": [REDIS_URL], "prefix": env["KANBAN_REDIS_PREFIX"]},
            }
        }
    servers = await database_sync_to_async(live_servers)(WORKERS, env=env)
    writers = [
        Writer(w, await open_wire(servers[w % len(servers)], scene, lambda _: None))
        for w in range(2)
    ]
    outage, stop_writing, stop_storm, resume = (asyncio.Event() for _ in range(4))
    writing = [
        asyncio.create_task(w.run(WRITES_PER_SECOND / len(writers), outage, stop_writing))
        for w in writers
    ]
    slow = SlowConsumer()
    slow_task = asyncio.create_task(slow.run(servers[0], scene, resume))
    storm = Storm()
    cyclers = [
        asyncio.create_task(reconnect_forever(n, servers, scene, stop_storm, storm))
        for n in range(SUBSCRIBERS)
    ]
    rss_before = rss_kib(servers[0].pid)
    await asyncio.sleep(SLOW_SECONDS)
    rss_slow = rss_kib(servers[0].pid)
    resume.set()
    await asyncio.sleep(max(0.0, STORM_SECONDS - SLOW_SECONDS))
    stop_storm.set()
    await asyncio.gather(*cyclers)

    # The final reconnect of every subscriber, exactly as the SDK does it.
    finals = [Subscriber() for _ in range(SUBSCRIBERS)]
    for n, sub in enumerate(finals):
        sub.wire = await open_wire(servers[n % len(servers)], scene, sub.on_event)
        for alias in ALIASES:
            reply = await sub.wire.call("subscribe", **({"alias": alias} if alias else {}))
            assert reply.get("ok"), reply
    await asyncio.gather(*(sub.reread(set(ALIASES)) for sub in finals))
    following = [asyncio.create_task(sub.run(None)) for sub in finals]
    await asyncio.sleep(TAIL_SECONDS)
    stop_writing.set()
    await asyncio.gather(*writing)

    truth = await database_sync_to_async(database_view)(scene)
    deadline = time.monotonic() + SETTLE_LIMIT
    while time.monotonic() < deadline and (
        any(s.view != truth for s in finals) or not slow_has_last_writes(slow, writers)
    ):
        await asyncio.sleep(0.1)
    divergent = sum(s.view != truth for s in finals)
    for task in following:
        task.cancel()
    for wire in [*(s.wire for s in finals if s.wire), *(w.wire for w in writers)]:
        await wire.close()
    slow_task.cancel()
    await asyncio.gather(slow_task, return_exceptions=True)

    told_resync = any(f.get("revision") == "resync" for f in slow.frames)
    slow_report = {}
    for alias in ALIASES:
        received = [
            f["revision"]
            for f in slow.frames
            if f.get("event") == "revision"
            and f.get("alias") == alias
            and f["revision"] != "resync"
        ]
        chains = [w.revisions[alias] for w in writers]
        acked = [r for chain in chains for r in chain]
        in_order, missing = gaps(received, chains)
        tail_missing = bool(acked) and max(int(r) for r in acked) not in {int(r) for r in received}
        slow_report[alias] = (len(received), in_order, missing, tail_missing)
    print(
        f"\nR9 ({SUBSCRIBERS} subscribers reconnecting for {STORM_SECONDS:.0f} s on {WORKERS} "
        f"worker(s), {'Redis' if REDIS_URL else 'in-memory'} layer, "
        f"{WRITES_PER_SECOND:.0f} writes/s):\n"
        f"  connect/disconnect cycles {storm.cycles}, events delivered {storm.events}, "
        f"errors {len(storm.errors)}; writes acknowledged "
        f"{sum(sum(w.acked.values()) for w in writers)}\n"
        f"  divergent subscribers after the final resync {divergent}/{SUBSCRIBERS}\n"
        f"  slow consumer ({SLOW_SECONDS:.0f} s not reading): per alias (events, in order, "
        f"gaps, last write missing) {slow_report}; told to resync {told_resync}, closed by "
        f"server {slow.closed_by_server}; worker RSS {rss_before} -> {rss_slow} KiB "
        f"(+{rss_slow - rss_before}); final resync reads p50 "
        f"{statistics.median(len(s.view) for s in finals)} keys"
    )
    assert storm.errors == [], storm.errors[:5]
    assert storm.cycles >= SUBSCRIBERS
    assert divergent == 0
    if not (told_resync or slow.closed_by_server):
        for alias, (count, in_order, missing, tail_missing) in slow_report.items():
            assert count > 0 and in_order and missing == 0 and not tail_missing, alias


def slow_has_last_writes(slow: SlowConsumer, writers: list[Writer]) -> bool:
    """Whether the slow consumer has read (or been closed before) each alias's last write."""
    if slow.closed_by_server is not None:
        return True
    seen = {(f.get("alias"), f.get("revision")) for f in slow.frames}
    last = {
        alias: max((r for w in writers for r in w.revisions[alias]), key=int, default=None)
        for alias in ALIASES
    }
    return all(rev is None or (alias, rev) in seen for alias, rev in last.items())
