"""``python -m bench.write_profile [kv|card|get] [COUNT]``: where a worker spends a bridge
write, or a read.

Starts one daphne worker sampled by py-spy (``KANBAN_BENCH_PROFILE``, default
``var/write-profile``), writes ``COUNT`` values back to back through one bridge socket (``kv``:
a plain key of a bare project, as bench B2's ``set``; ``card``: a card of a built-in Board
moved, as the Board writes it, with one more socket subscribed to the board so that the
worker's hub delivers each change; ``get``: that plain key read back, as B2's ``get`` and
B3's reads), and prints ``bench.profile``'s summary of the worker:
the share of its busy samples in each function, from the frame to the commit and the
publish. Same environment as ``python -m bench`` (bench/env.py).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from bench import env


async def _writes(kind: str, count: int, scene: env.Scene) -> tuple[float, float]:
    """Wall and worker CPU seconds of ``count`` writes (or reads)."""
    from bench.board_bench import _card, _move
    from bench.bridge_bench import Wire, open_bridge
    from bench.many_boards import _cpu_seconds

    with env.daphne() as server:
        wire = Wire(await open_bridge(server, scene))
        viewer = Wire(await open_bridge(server, scene))
        await viewer.call("subscribe")
        ids = [f"g{n:05d}" for n in range(20)]
        cards = [await asyncio.to_thread(_card, scene, card_id) for card_id in ids]
        if kind == "get":
            await wire.call("set", key="profiled", value={"n": 0, "title": "Bench card"})
        started, cpu = time.perf_counter(), _cpu_seconds(server.pid)
        for n in range(count):
            if kind == "get":
                await wire.call("get", key="profiled")
            elif kind == "kv":
                await wire.call("set", key="profiled", value={"n": n, "title": "Bench card"})
            else:
                cards[n % 20] = card = _move(cards[n % 20])
                await wire.call("set", key=f"card:{ids[n % 20]}", value=card)
        took, cpu = time.perf_counter() - started, _cpu_seconds(server.pid) - cpu
        await wire.socket.close()
        await viewer.socket.close()
    return took, cpu


def main(argv: list[str]) -> int:
    kind = argv[0] if argv else "kv"
    count = int(argv[1]) if len(argv) > 1 else 2000
    if kind not in ("kv", "card", "get"):
        print(__doc__, file=sys.stderr)
        return 2
    directory = Path(os.environ.setdefault("KANBAN_BENCH_PROFILE", "var/write-profile"))
    for old in directory.glob("daphne-*.txt"):
        old.unlink()
    env.configure_environment()
    env.migrate()
    env.setup_django()
    from bench.board_bench import board_scene

    scene = board_scene(env.make_scene(), 40)
    took, cpu = asyncio.run(_writes(kind, count, scene))
    what = "reads" if kind == "get" else "writes, each with its one delivery"
    print(
        f"{count} {kind} calls, one at a time, in {took:.2f} s ({took / count * 1000:.2f} ms"
        f" each); worker CPU {cpu / count * 1000:.2f} ms a call ({what})"
    )
    from bench.profile import summarize

    time.sleep(1)
    for path in sorted(directory.glob("daphne-*.txt")):
        print(summarize(path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
