"""B2 (bridge get/set latency against raw psycopg), B3 (requests per second against a bare
server doing the same access query and KV read), B4 (one write fanned out to N subscribers
against a bare Redis broadcaster) and B6 (memory per idle socket against a bare server)."""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg
import redis
from websockets.asyncio.client import ClientConnection, connect

from bench import env
from bench.env import Scene, Server
from bench.stats import Figure, at_least, at_most, interleave_async, percentile

OPEN_BATCH = 100


async def open_bridge(server: Server, scene: Scene) -> ClientConnection:
    """A bridge socket past its opening context event, which is always first."""
    socket = await connect(
        f"{server.ws_url}/ws/boards/{scene.board_id}/",
        additional_headers=[("Cookie", scene.cookie)],
        origin=server.url,  # type: ignore[arg-type]
        compression=None,
        max_queue=None,
        open_timeout=60,
        ping_interval=None,
    )
    opening = json.loads(await socket.recv())
    if opening.get("event") != "context":
        raise RuntimeError(f"the bridge opened with {opening}, not its context")
    return socket


async def open_bare(server: Server) -> ClientConnection:
    return await connect(
        server.ws_url, compression=None, max_queue=None, open_timeout=60, ping_interval=None
    )


async def open_many(
    count: int, opener: Callable[[], Awaitable[ClientConnection]]
) -> list[ClientConnection]:
    sockets: list[ClientConnection] = []
    for start in range(0, count, OPEN_BATCH):
        batch = min(OPEN_BATCH, count - start)
        sockets.extend(await asyncio.gather(*(opener() for _ in range(batch))))
    return sockets


async def close_all(sockets: list[ClientConnection]) -> None:
    await asyncio.gather(*(s.close() for s in sockets), return_exceptions=True)


class Wire:
    """Sequential request/reply on one bridge socket."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.ids = itertools.count(1)

    async def call(self, op: str, **fields: Any) -> dict[str, Any]:
        rid = next(self.ids)
        await self.socket.send(json.dumps({"v": 1, "id": rid, "op": op, **fields}))
        while True:
            reply = json.loads(await self.socket.recv())
            if reply.get("id") == rid:
                if not reply.get("ok"):
                    raise RuntimeError(f"bridge refused {op}: {reply}")
                return reply


# B2 ---------------------------------------------------------------------------------------


async def _bridge_latencies(wire: Wire, op: str, count: int) -> list[float]:
    samples = []
    for index in range(count):
        fields: dict[str, Any] = {"key": "b2"}
        if op == "set":
            fields["value"] = {"n": index, "title": "Bench card"}
        start = time.perf_counter()
        await wire.call(op, **fields)
        samples.append(time.perf_counter() - start)
    return samples


def _raw_latencies(raw: psycopg.Connection[Any], op: str, count: int, scene: Scene) -> list[float]:
    from storage import jsoncodec
    from storage.backends.postgresql import PostgresDialect
    from storage.namespaces import project_kv

    dialect = PostgresDialect()
    address = project_kv(scene.board_id, "b2")
    samples = []
    for index in range(count):
        start = time.perf_counter()
        if op == "get":
            with raw.cursor() as cursor:
                cursor.execute(dialect.get_value, (address.namespace, address.key))
                jsoncodec.decode(cursor.fetchone()[1])  # type: ignore[index]
        else:
            _raw_set(raw, scene, "b2", {"n": index, "title": "Bench card"})
        samples.append(time.perf_counter() - start)
    return samples


def _raw_set(raw: psycopg.Connection[Any], scene: Scene, key: str, value: Any) -> None:
    """The statement a KV ``set`` commits, straight through psycopg, in its transaction."""
    from storage import jsoncodec
    from storage.backends.postgresql import PostgresDialect
    from storage.namespaces import project_kv

    address = project_kv(scene.board_id, key)
    text = jsoncodec.encode(value)
    with raw.cursor() as cursor, raw.transaction():
        cursor.execute(
            PostgresDialect()._upsert,
            (address.namespace, address.key, text, None, datetime.now(UTC)),
            prepare=True,
        )
        cursor.fetchone()


async def b2(*, rounds: int, count: int, scene: Scene) -> list[Figure]:
    raw = psycopg.connect(os.environ["DATABASE_URL"], autocommit=True)
    figures = []
    with env.daphne() as server:
        socket = await open_bridge(server, scene)
        wire = Wire(socket)
        await wire.call("set", key="b2", value={"title": "Bench card"})
        for op, p50_target in (("get", 3.0), ("set", 1.8)):
            await _bridge_latencies(wire, op, max(20, count // 10))
            _raw_latencies(raw, op, max(20, count // 10), scene)

            async def bridge(op: str = op) -> list[float]:
                return await _bridge_latencies(wire, op, count)

            async def baseline(op: str = op) -> list[float]:
                return _raw_latencies(raw, op, count, scene)

            pairs = await interleave_async(rounds, bridge, baseline)
            p50 = [percentile(a, 0.5) / percentile(b, 0.5) for a, b in pairs]
            p99 = [percentile(a, 0.99) / percentile(b, 0.99) for a, b in pairs]
            tail = [percentile(a, 0.99) / percentile(a, 0.5) for a, _ in pairs]
            ms = sorted(percentile(a, 0.5) for a, _ in pairs)[len(pairs) // 2] * 1e3
            figures += [
                Figure(
                    f"B2 {op} p50",
                    f"bridge {op} round trip p50 / raw psycopg p50",
                    "x",
                    at_most(p50_target),
                    p50,
                    note=f"bridge p50 {ms:.2f} ms",
                ),
                Figure(
                    f"B2 {op} p99",
                    f"bridge {op} p99 / raw psycopg p99",
                    "x",
                    at_most(p50_target),
                    p99,
                ),
                Figure(
                    f"B2 {op} p99/p50",
                    f"bridge {op} tail: its own p99 / p50",
                    "x",
                    at_most(1.5),
                    tail,
                ),
            ]
        await socket.close()
    raw.close()
    return figures


# B3 ---------------------------------------------------------------------------------------


async def _throughput(sockets: list[ClientConnection], seconds: float, frame: str) -> float:
    """Replies per second with every socket keeping one request in flight."""
    stop = time.perf_counter() + seconds
    counts = [0] * len(sockets)

    async def drive(index: int, socket: ClientConnection) -> None:
        while time.perf_counter() < stop:
            await socket.send(frame)
            await socket.recv()
            counts[index] += 1

    start = time.perf_counter()
    await asyncio.gather(*(drive(i, s) for i, s in enumerate(sockets)))
    return sum(counts) / (time.perf_counter() - start)


def _read_floor_work(scene: Scene, key: str) -> dict[str, Any]:
    """The statements one bridge ``get`` runs, from the server's own code: the access
    decision's one query and the engine's KV read, with this scene's parameters."""
    from kanban.access.decision import _access_sql
    from storage.backends import dialect_for
    from storage.kv import Dataset

    user = scene.user_id
    return {
        "access": _access_sql("postgresql"),
        "access_params": [user, user, None, user, str(scene.board_id)],
        "kv": dialect_for("postgresql").get_value,
        "namespace": Dataset(scene.board_id, "kv", None).address(key).namespace,
    }


async def b3(*, rounds: int, seconds: float, connections: int, scene: Scene) -> list[Figure]:
    key = "b3"
    frame = json.dumps({"v": 1, "id": 1, "op": "get", "key": key})
    work = json.dumps(_read_floor_work(scene, key))
    with (
        env.daphne() as worker,
        env.baseline("read", os.environ["DATABASE_URL"], work) as floor,
    ):
        bridge_sockets = await open_many(connections, lambda: open_bridge(worker, scene))
        await Wire(bridge_sockets[0]).call("set", key=key, value={"title": "Bench card"})
        bare_sockets = await open_many(connections, lambda: open_bare(floor))
        if (
            json.loads(await _one(bare_sockets[0], frame)).get("result", {}).get("found")
            is not True
        ):
            raise RuntimeError("the read floor did not find the card the bridge wrote")
        await _throughput(bridge_sockets, 1.0, frame)
        await _throughput(bare_sockets, 1.0, frame)
        pairs = await interleave_async(
            rounds,
            lambda: _throughput(bridge_sockets, seconds, frame),
            lambda: _throughput(bare_sockets, seconds, frame),
        )
        await close_all(bridge_sockets + bare_sockets)
    rate = sorted(a for a, _ in pairs)[len(pairs) // 2]
    floor_rate = sorted(b for _, b in pairs)[len(pairs) // 2]
    return [
        Figure(
            "B3 rps",
            f"bridge get requests/s, one worker, {connections} connections"
            " / bare websockets + psycopg doing the same access query and KV read",
            "x",
            at_least(0.5),
            [a / b for a, b in pairs],
            note=f"bridge {rate:.0f} req/s, floor {floor_rate:.0f} req/s",
        )
    ]


async def _one(socket: ClientConnection, frame: str) -> str:
    await socket.send(frame)
    return str(await socket.recv())


# B4 ---------------------------------------------------------------------------------------


async def _collect(
    sockets: list[ClientConnection], trigger: Callable[[], Awaitable[float]], timeout: float
) -> tuple[list[float], int]:
    """Latencies from ``trigger``'s start time to each socket's first event, and losses."""
    arrivals: list[float] = []

    async def wait(socket: ClientConnection) -> None:
        try:
            await asyncio.wait_for(socket.recv(), timeout)
        except TimeoutError:
            return
        arrivals.append(time.perf_counter())

    waiters = [asyncio.create_task(wait(s)) for s in sockets]
    await asyncio.sleep(0)
    started = await trigger()
    await asyncio.gather(*waiters)
    return [t - started for t in arrivals], len(sockets) - len(arrivals)


@dataclass
class _FanOut:
    """One side of B4: sockets waiting for an event, and what makes the event happen."""

    sockets: list[ClientConnection]
    trigger: Callable[[], Awaitable[float]]
    writes: int
    lost: int = 0

    async def round(self) -> list[float]:
        samples: list[float] = []
        for _ in range(self.writes):
            got, missing = await _collect(self.sockets, self.trigger, 5.0)
            samples += got
            self.lost += missing
        return samples


@dataclass
class _Floors:
    """B4's baseline round: the bare broadcaster's sockets hear a write committed straight
    through psycopg and then published (the floor: the same work as the bridge's ``set``,
    without the product), and a publish alone (the floor before it was re-based)."""

    written: _FanOut
    published: _FanOut

    async def round(self) -> tuple[list[float], list[float]]:
        return await self.written.round(), await self.published.round()


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def _fan_out_ratio(
    id: str, what: str, quantile: float, pairs: list[tuple[list[float], list[float]]]
) -> Figure:
    """A B4 figure from rounds of (bridge, bare) latencies: the ratio of their ``quantile``
    each round, at most 2, noting the bridge's at that quantile (median over rounds)."""
    label = f"p{round(quantile * 100)}"
    return Figure(
        id,
        what,
        "x",
        at_most(2.0),
        [percentile(a, quantile) / percentile(b, quantile) for a, b in pairs],
        note=f"bridge {label} {_median(_bridge_ms(pairs, quantile)):.1f} ms",
    )


def _bridge_ms(pairs: list[tuple[list[float], list[float]]], quantile: float) -> list[float]:
    """The bridge's latency at ``quantile`` each round, in ms."""
    return _ms([a for a, _ in pairs], quantile)


def _ms(rounds: list[list[float]], quantile: float) -> list[float]:
    return [percentile(samples, quantile) * 1e3 for samples in rounds]


async def b4(
    *, rounds: int, fanouts: list[int], writes: int, scene: Scene, redis_url: str
) -> list[Figure]:
    figures = []
    channel = f"bench.b4.{os.urandom(4).hex()}"
    publisher = redis.Redis.from_url(redis_url)
    event = json.dumps({"v": 1, "event": "revision", "alias": None, "revision": "123456"})
    raw = psycopg.connect(os.environ["DATABASE_URL"], autocommit=True)
    with env.daphne() as worker, env.baseline("broadcast", redis_url, channel) as bare:
        writer_socket = await open_bridge(worker, scene)
        writer = Wire(writer_socket)

        async def write() -> float:
            started = time.perf_counter()
            await writer.call("set", key="b4", value={"title": "Bench card"})
            return started

        async def publish() -> float:
            started = time.perf_counter()
            await asyncio.to_thread(publisher.publish, channel, event)
            return started

        def commit_then_publish() -> None:
            _raw_set(raw, scene, "b4", {"title": "Bench card"})
            publisher.publish(channel, event)

        async def write_and_publish() -> float:
            started = time.perf_counter()
            await asyncio.to_thread(commit_then_publish)
            return started

        for n in fanouts:
            listeners = await open_many(n, lambda: open_bridge(worker, scene))
            for socket in listeners:
                await Wire(socket).call("subscribe")
            bare_listeners = await open_many(n, lambda: open_bare(bare))
            await asyncio.sleep(0.5)
            bridge = _FanOut(listeners, write, writes)
            floors = _Floors(
                _FanOut(bare_listeners, write_and_publish, writes),
                _FanOut(bare_listeners, publish, writes),
            )
            await bridge.round()  # warm up
            await floors.round()
            bridge.lost = floors.written.lost = floors.published.lost = 0
            rounds_ = await interleave_async(rounds, bridge.round, floors.round)
            pairs = [(a, written) for a, (written, _) in rounds_]
            published = [(a, alone) for a, (_, alone) in rounds_]
            notified = f"write -> {n} subscribers notified"
            floor = "bare psycopg commit + Redis broadcast"
            figures += [
                _fan_out_ratio(f"B4 N={n} p50", f"{notified}, p50 / {floor} p50", 0.5, pairs),
                _fan_out_ratio(f"B4 N={n} p99", f"{notified}, p99 / {floor} p99", 0.99, pairs),
                Figure(
                    f"B4 N={n} p50 vs broadcast",
                    f"{notified}, p50 / bare Redis broadcast alone p50 (no write: the old floor)",
                    "x",
                    None,
                    [percentile(a, 0.5) / percentile(b, 0.5) for a, b in published],
                    note=f"floor p50 {_median(_ms([b for _, b in pairs], 0.5)):.1f} ms, "
                    f"broadcast alone {_median(_ms([b for _, b in published], 0.5)):.1f} ms",
                ),
                Figure(
                    f"B4 N={n} lost",
                    f"events lost over {rounds} rounds x {writes} writes x {n} subscribers",
                    "events",
                    at_most(0),
                    [float(bridge.lost)],
                    note=f"bare lost {floors.written.lost + floors.published.lost}",
                ),
            ]
            if n >= 1000:
                figures.append(
                    Figure(
                        f"B4 N={n} p99 abs",
                        f"write -> {n} subscribers, p99 latency",
                        "ms",
                        at_most(50),
                        _bridge_ms(pairs, 0.99),
                    )
                )
            await close_all(listeners + bare_listeners)
        await writer_socket.close()
    publisher.close()
    raw.close()
    return figures


# B6 ---------------------------------------------------------------------------------------


async def _memory_per_socket(
    start: Callable[[], Server], opener: Callable[[Server], Awaitable[ClientConnection]], n: int
) -> float:
    with start() as server:
        # One connection first, so lazily built state (hub, pools) is not counted per socket.
        first = await opener(server)
        await asyncio.sleep(0.5)
        before = server.rss_kib()
        sockets = await open_many(n, lambda: opener(server))
        await asyncio.sleep(1.0)
        after = server.rss_kib()
        await close_all([first, *sockets])
    gc.collect()
    return (after - before) * 1024 / n


async def b6(*, rounds: int, connections: int, scene: Scene) -> list[Figure]:
    env.raise_open_files(2 * connections + 1024)
    pairs = await interleave_async(
        rounds,
        lambda: _memory_per_socket(env.daphne, lambda s: open_bridge(s, scene), connections),
        lambda: _memory_per_socket(lambda: env.baseline("echo"), open_bare, connections),
    )
    per = sorted(a for a, _ in pairs)[len(pairs) // 2]
    bare = sorted(b for _, b in pairs)[len(pairs) // 2]
    return [
        Figure(
            "B6 memory",
            f"RSS per idle websocket, {connections} connections / bare websockets server",
            "x",
            at_most(1.5),
            [a / b for a, b in pairs],
            note=f"bridge {per / 1024:.1f} KiB/socket, bare {bare / 1024:.1f} KiB",
        )
    ]
