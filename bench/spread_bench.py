"""U6 and the capacity row: a board's viewers spread over workers, and what one worker
sustains.

- U6: one Board watched by 1,000 simulated viewers (bench/viewers.py, in processes of their
  own) connected through the repository's ``deploy/nginx.conf`` to 3 daphne workers (round
  robin), card moves written through one worker at a steady rate: write -> seen p99 over
  every viewer and move, and viewer keys not at the database's last revision. How the
  viewers spread is read from each worker's /metrics.
- Capacity: one worker and its viewers, the move rate raised step by step until write ->
  seen p99 passes 250 ms (or a viewer diverges): the most deliveries a second (moves a
  second x viewers) it sustained, beside Centrifugo's reported ~12,500 per core. With it,
  the Redis commands each move costs at two viewer counts: the channel layer sends one
  message per interested worker, so the cost must not grow with the sockets.
"""

from __future__ import annotations

import asyncio
import os
import time
import urllib.request
from typing import Any

import redis

from bench import env
from bench.board_bench import (
    CARDS,
    _client_note,
    _lags,
    _pool,
    board_scene,
    drive_moves,
    moves_seen,
)
from bench.bridge_bench import Wire, close_all, open_bridge
from bench.env import Scene, Server
from bench.nginx import nginx_in_front_of
from bench.stats import Figure, at_least, at_most, percentile

#: What Centrifugo reports one core delivering (its docs' benchmark), for scale.
ANCHOR = 12_500
#: The bench's own workers' /metrics token (loopback only, made per run).
METRICS_TOKEN = os.urandom(12).hex()


def _sockets(server: Server) -> int:
    request = urllib.request.Request(  # noqa: S310 (the bench's own worker, http)
        server.url + "/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
        for line in answer.read().decode().splitlines():
            if line.startswith("kanban_bridge_sockets "):
                return int(float(line.split()[1]))
    return -1


async def _u6(*, seconds: float, rate: float, viewers: int, board: Scene) -> list[Figure]:
    os.environ["KANBAN_METRICS_TOKEN"] = METRICS_TOKEN
    with env.daphne() as first, env.daphne() as second, env.daphne() as third:
        workers = [first, second, third]
        with nginx_in_front_of([w.port for w in workers], connections=4 * viewers + 256) as proxy:
            pool = await asyncio.to_thread(_pool, proxy, board, viewers)  # type: ignore[arg-type]
            try:
                spread = [await asyncio.to_thread(_sockets, w) for w in workers]
                seen = await moves_seen(pool, first, board, seconds=seconds, rate=rate)
            finally:
                await asyncio.to_thread(pool.close)
    label = f"@{viewers}/3 workers"
    note = (
        f"sockets per worker {spread} (+1 writer on the first); {seen.moves} moves in"
        f" {seconds:g} s written through one worker; "
        + _client_note(viewers, seen.client_cpu, seen.seconds)
    )
    return [
        Figure(
            f"U6 write->seen p99 {label}",
            "card moves through one worker, seen by viewers spread over three behind nginx",
            "ms",
            at_most(300),
            [percentile(seen.lags, 0.99) * 1000],
            note,
        ),
        seen.diverged_figure(f"U6 diverged {label}"),
    ]


def u6(*, seconds: float, rate: float, viewers: int, scene: Scene) -> list[Figure]:
    return asyncio.run(
        _u6(seconds=seconds, rate=rate, viewers=viewers, board=board_scene(scene, CARDS))
    )


def _redis_commands(client: redis.Redis) -> int:
    info: dict[str, Any] = client.info("stats")  # type: ignore[assignment]
    return int(info["total_commands_processed"])


#: Writer sockets sharing a step's rate: one socket's round trip under load capped the
#: last round at about 35 moves a second, below what the worker sustains.
WRITERS = 4

#: How long each step first listens to Redis with nobody writing.
IDLE_SECONDS = 2.0


async def _idle_commands_per_second(client: redis.Redis) -> float:
    """Redis commands a second with the viewers connected and nobody writing: the sockets'
    quota slots kept alive (kanban/quotas/deployment.py), the layer's own polls. They follow
    time and sockets, not events, so a move's cost is counted above them."""
    started, commands = time.monotonic(), _redis_commands(client)
    await asyncio.sleep(IDLE_SECONDS)
    return (_redis_commands(client) - commands) / (time.monotonic() - started)


async def _step(
    server: Server, board: Scene, pool: Any, *, seconds: float, rate: float, client: redis.Redis
) -> tuple[float, int, int, float, float]:
    """One rate: (p99 ms, diverged, moves, Redis commands per move, client CPU s)."""
    writers = [Wire(await open_bridge(server, board)) for _ in range(WRITERS)]
    cpu_before = pool.report([])["cpu"]
    idle = await _idle_commands_per_second(client)
    started, commands = time.monotonic(), _redis_commands(client)
    written, moves = await drive_moves(writers, board, seconds=seconds, rate=rate)
    spent = _redis_commands(client) - commands - idle * (time.monotonic() - started)
    per_move = max(spent, 0.0) / max(moves, 1)
    report = await asyncio.to_thread(pool.report, list(written))
    lags, diverged = _lags(report, written)
    await close_all([wire.socket for wire in writers])
    return percentile(lags, 0.99) * 1000, diverged, moves, per_move, report["cpu"] - cpu_before


async def _capacity(
    *, seconds: float, rates: tuple[float, ...], viewers: tuple[int, int], board: Scene
) -> list[Figure]:
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    few, many = viewers
    with env.daphne() as server:
        pool = await asyncio.to_thread(_pool, server, board, few)
        try:
            _, _, _, few_cost, _ = await _step(
                server, board, pool, seconds=seconds, rate=rates[0], client=client
            )
        finally:
            await asyncio.to_thread(pool.close)
        pool = await asyncio.to_thread(_pool, server, board, many)
        steps: list[str] = []
        best, many_cost, cpu, saturated = 0.0, 0.0, 0.0, False
        try:
            for rate in rates:
                p99, diverged, moves, cost, cpu = await _step(
                    server, board, pool, seconds=seconds, rate=rate, client=client
                )
                achieved = moves / seconds
                steps.append(f"{achieved:.0f}/s: p99 {p99:.0f} ms")
                many_cost = many_cost or cost
                if p99 > 250 or diverged:
                    saturated = True
                    break
                best = achieved * many
        finally:
            await asyncio.to_thread(pool.close)
    ceiling = "" if saturated else " (the last rate still held: at least this)"
    note = (
        f"{many} viewers on one worker, {', '.join(steps)}{ceiling}; anchor ~{ANCHOR:,}"
        f" deliveries/s per core (Centrifugo); Redis commands per move {few_cost:.1f} at"
        f" {few} viewers, {many_cost:.1f} at {many}; client CPU {cpu:.1f} s in the last step"
    )
    return [
        Figure(
            "capacity deliveries/s",
            "moves a second x viewers one worker sustains with write -> seen p99 <= 250 ms",
            "/s",
            at_least(5000),
            [best],
            note,
        ),
        Figure(
            "capacity Redis commands/move",
            f"at {many} viewers / at {few}: the layer's cost per event must not follow sockets",
            "x",
            at_most(1.5),
            [many_cost / max(few_cost, 1e-9)],
        ),
    ]


def capacity(
    *, seconds: float, rates: tuple[float, ...], viewers: tuple[int, int], scene: Scene
) -> list[Figure]:
    board = board_scene(scene, CARDS)
    return asyncio.run(_capacity(seconds=seconds, rates=rates, viewers=viewers, board=board))
