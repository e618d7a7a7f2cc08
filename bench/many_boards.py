"""The capacity row for many small boards: B boards x 5 viewers over 2 workers.

The shape of a multi-team deployment: many boards, a few people on each, every change a
write. ``boards`` projects holding a Board's keys (a few cards each), five simulated viewers on each
(bench/viewers.py, in processes of their own, their CPU printed), spread over two daphne
workers (a board's viewers alternate between them, so each change crosses the channel
layer to both), and one writer socket per board on alternating workers. Card moves are
written at a steady rate spread over the boards, the rate raised step by step until write
-> seen p99 passes 250 ms (or a viewer diverges).

Per step it reads each worker's CPU time (``/proc``) and the Redis server's
(``INFO cpu``) and command count (``INFO stats``), with an idle interval before the writes
counted apart: so **worker CPU-ms per write** covers the write and its five deliveries,
and Redis commands and CPU per write are the layer's cost of one change. The layer runs on
a private ``redis-server`` of this row's own (never the shared one, whose counts other
clients move); PostgreSQL is the bench database.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import redis

from bench import env
from bench.board_bench import _card, _client_note, _move
from bench.board_bench import _lags as _one_board_lags
from bench.bridge_bench import Wire, close_all, open_bridge
from bench.env import Scene, Server
from bench.ports import HOST, free_port
from bench.stats import Figure, at_most, percentile
from bench.viewers import Target, ViewerPool

VIEWERS_PER_BOARD = 5
CARDS_PER_BOARD = 8
#: Concurrent writers sharing a step's rate (each owns a slice of the boards).
DRIVERS = 16
IDLE_SECONDS = 2.0
TICK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """A process's CPU time (user + system, every thread)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()  # noqa: SIM115
    return (int(fields[11]) + int(fields[12])) / TICK


@contextlib.contextmanager
def private_redis() -> Iterator[str]:
    """A throwaway ``redis-server`` on a free loopback port: its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("the many-boards row needs redis-server on PATH")
    port = free_port()
    argv = [binary, "--port", str(port), "--bind", HOST, "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    )
    url = f"redis://{HOST}:{port}/0"
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=0.5)
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(redis.RedisError):
                if client.ping():
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("the private redis-server did not answer")
            time.sleep(0.05)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass(frozen=True)
class Meters:
    """What the row reads at an instant: worker CPU, Redis CPU and commands."""

    at: float
    workers: float
    redis_cpu: float
    commands: int

    @staticmethod
    def read(workers: list[Server], client: redis.Redis) -> Meters:
        cpu: dict[str, Any] = client.info("cpu")  # type: ignore[assignment]
        stats: dict[str, Any] = client.info("stats")  # type: ignore[assignment]
        return Meters(
            time.monotonic(),
            sum(_cpu_seconds(w.pid) for w in workers),
            float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]),
            int(stats["total_commands_processed"]),
        )


@dataclass(frozen=True)
class Step:
    asked: float
    writes: int
    seconds: float
    p99_ms: float
    p50_ms: float
    diverged: int
    worker_ms: float
    redis_ms: float
    commands: float
    client_cpu: float

    @property
    def rate(self) -> float:
        return self.writes / self.seconds


def _per_write(busy: float, idle: float, span: float, writes: int) -> float:
    """A busy interval's amount per write, less what the same span costs idle."""
    return max(busy - idle * span, 0.0) / max(writes, 1)


async def _drive(
    wires: list[Wire], cards: list[dict[str, dict[str, Any]]], *, seconds: float, rate: float
) -> tuple[dict[tuple[int, str], tuple[str, float]], int]:
    """Card moves at ``rate`` a second in all, each on a random board of a driver's slice:
    each (board, key)'s last revision and when it was written, and how many went."""
    written: dict[tuple[int, str], tuple[str, float]] = {}
    end = time.monotonic() + seconds
    count = 0
    boards = list(range(len(wires)))
    random.shuffle(boards)

    slices = [boards[n::DRIVERS] for n in range(DRIVERS) if boards[n::DRIVERS]]

    async def drive(mine: list[int]) -> None:
        nonlocal count
        while time.monotonic() < end:
            started = time.monotonic()
            board = random.choice(mine)
            card_id = random.choice(list(cards[board]))
            card = cards[board][card_id] = _move(cards[board][card_id])
            reply = await wires[board].call("set", key=f"card:{card_id}", value=card)
            written[(board, f"card:{card_id}")] = (reply["result"]["revision"], started)
            count += 1
            pause = len(slices) / rate - (time.monotonic() - started)
            await asyncio.sleep(max(0.0, pause))

    await asyncio.gather(*(drive(mine) for mine in slices))
    await asyncio.sleep(3.0)  # the last events land
    return written, count


def _lags(
    report: dict[str, Any], owners: list[int], written: dict[tuple[int, str], tuple[str, float]]
) -> tuple[list[float], int]:
    """Write -> seen of each viewer for its own board's written keys; (viewer, key) pairs
    not at the key's last revision."""
    lags: list[float] = []
    diverged = 0
    by_board: dict[int, list[tuple[str, tuple[str, float]]]] = {}
    for (board, key), last in written.items():
        by_board.setdefault(board, []).append((key, last))
    for seen, board in zip(report["seen"], owners, strict=True):
        # Each viewer watches one board: the Board rows' rule over that board's writes.
        one_lags, one_diverged = _one_board_lags({"seen": [seen]}, dict(by_board.get(board, [])))
        lags.extend(one_lags)
        diverged += one_diverged
    return lags, diverged


async def _step(
    workers: list[Server],
    wires: list[Wire],
    cards: list[dict[str, dict[str, Any]]],
    pool: ViewerPool,
    owners: list[int],
    client: redis.Redis,
    *,
    seconds: float,
    rate: float,
) -> Step:
    cpu_before = pool.report([])["cpu"]
    idle_from = Meters.read(workers, client)
    await asyncio.sleep(IDLE_SECONDS)
    idle_to = Meters.read(workers, client)
    span = idle_to.at - idle_from.at
    written, writes = await _drive(wires, cards, seconds=seconds, rate=rate)
    busy = Meters.read(workers, client)
    report = await asyncio.to_thread(pool.report, sorted({key for _, key in written}))
    lags, diverged = _lags(report, owners, written)
    took = busy.at - idle_to.at

    def per(name: str) -> float:
        idle = (getattr(idle_to, name) - getattr(idle_from, name)) / span
        return _per_write(getattr(busy, name) - getattr(idle_to, name), idle, took, writes)

    return Step(
        asked=rate,
        writes=writes,
        seconds=seconds,
        p99_ms=percentile(lags, 0.99) * 1000 if lags else float("inf"),
        p50_ms=percentile(lags, 0.5) * 1000 if lags else float("inf"),
        diverged=diverged,
        worker_ms=per("workers") * 1000,
        redis_ms=per("redis_cpu") * 1000,
        commands=per("commands"),
        client_cpu=report["cpu"] - cpu_before,
    )


def _boards(scene: Scene, count: int) -> list[Scene]:
    """``count`` projects of their own with a Board's keys (``board_fill``), alice owning
    each. Not the built-in Board's package: that names one project id, so importing it again
    updates the same project. A card write is the same KV write either way (the Board's own
    rules concern comments and long checklists)."""
    from django.contrib.auth import get_user_model

    from kanban.access.memberships import membership_set
    from kanban.data.demo import board_fill
    from kanban.projects.lifecycle import project_create

    alice = get_user_model().objects.get(pk=scene.user_id)
    made = []
    for n in range(count):
        project = project_create(name=f"Bench small board {n}")
        membership_set(user=alice, project=project, role="owner")
        board_fill(project_id=project.id, cards=CARDS_PER_BOARD, user=alice)
        made.append(Scene(board_id=project.id, user_id=scene.user_id, cookie=scene.cookie))
    return made


def _cards(board: Scene) -> dict[str, dict[str, Any]]:
    """A board's cards as the bench moves them (the ones ``board_fill`` adds)."""
    return {f"g{n:05d}": _card(board, f"g{n:05d}") for n in range(CARDS_PER_BOARD - 5)}


async def _many(
    *,
    seconds: float,
    rates: tuple[float, ...],
    boards: list[Scene],
    cards: list[dict[str, dict[str, Any]]],
) -> tuple[list[Step], int]:
    with env.daphne() as first, env.daphne() as second:
        workers = [first, second]
        targets, owners = [], []
        for index, board in enumerate(boards):
            for n in range(VIEWERS_PER_BOARD):
                server = workers[(index + n) % 2]
                targets.append(
                    Target(f"{server.ws_url}/ws/boards/{board.board_id}/", server.url, board.cookie)
                )
                owners.append(index)
        processes = max(1, min(os.cpu_count() or 1, -(-len(targets) // 250)))
        pool = await asyncio.to_thread(ViewerPool, targets, processes)
        # The pool hands process n the targets n::processes and reports them in that order.
        owners = [owner for n in range(processes) for owner in owners[n::processes]]
        sockets = [await open_bridge(workers[i % 2], b) for i, b in enumerate(boards)]
        wires = [Wire(socket) for socket in sockets]
        client = redis.Redis.from_url(os.environ["REDIS_URL"])
        steps: list[Step] = []
        try:
            for rate in rates:
                step = await _step(
                    workers, wires, cards, pool, owners, client, seconds=seconds, rate=rate
                )
                steps.append(step)
                print(
                    f"   {len(boards)} boards: {step.rate:.0f} writes/s p50 {step.p50_ms:.0f}"
                    f" p99 {step.p99_ms:.0f} ms, diverged {step.diverged}, worker"
                    f" {step.worker_ms:.2f} CPU-ms/write, Redis {step.redis_ms:.3f} CPU-ms and"
                    f" {step.commands:.1f} commands/write",
                    flush=True,
                )
                if step.p99_ms > 250 or step.diverged:
                    break
        finally:
            await close_all(sockets)
            await asyncio.to_thread(pool.close)
    return steps, len(targets)


def capacity(
    *, seconds: float, rates: tuple[float, ...], boards: int, scene: Scene
) -> list[Figure]:
    with private_redis() as url:
        shared = os.environ["REDIS_URL"]
        os.environ["REDIS_URL"] = url
        try:
            made = _boards(scene, boards)
            steps, viewers = asyncio.run(
                _many(seconds=seconds, rates=rates, boards=made, cards=[_cards(b) for b in made])
            )
        finally:
            os.environ["REDIS_URL"] = shared
    held = [s for s in steps if s.p99_ms <= 250 and not s.diverged]
    # The costs are read at the highest rate that held (the first step if none did): a
    # saturated step's CPU is queueing as much as work.
    at = held[-1] if held else steps[0]
    label = f"{boards}x{VIEWERS_PER_BOARD}/2 workers"
    trail = "; ".join(
        f"{s.rate:.0f}/s: p50 {s.p50_ms:.0f} p99 {s.p99_ms:.0f} ms, {s.worker_ms:.2f} ms CPU,"
        f" {s.commands:.1f} cmds, diverged {s.diverged}"
        for s in steps
    )
    ceiling = "" if len(held) < len(steps) else " (the last rate still held: at least this)"
    note = (
        f"{trail}{ceiling}; "
        + _client_note(viewers, at.client_cpu, at.seconds + 3.0)
        + "; private redis-server"
    )
    return [
        Figure(
            f"CAP many boards writes/s {label}",
            "card writes a second spread over the boards with write -> seen p99 <= 250 ms",
            "/s",
            None,
            [at.rate if held else 0.0],
            note,
        ),
        Figure(
            f"CAP many boards worker CPU-ms/write {label}",
            "both workers' CPU per write with its five deliveries, above idle",
            "ms",
            at_most(2.0),
            [at.worker_ms],
        ),
        Figure(
            f"CAP many boards Redis commands/write {label}",
            "Redis commands per write above idle (private redis-server)",
            "/write",
            None,
            [at.commands],
        ),
        Figure(
            f"CAP many boards Redis CPU-ms/write {label}",
            "the Redis server's CPU per write above idle",
            "ms",
            None,
            [at.redis_ms],
        ),
        Figure(
            f"CAP many boards p99 {label}",
            f"write -> seen p99 at {at.rate:.0f} writes/s",
            "ms",
            at_most(250),
            [at.p99_ms],
        ),
    ]
