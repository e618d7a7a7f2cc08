"""``python -m bench [--quick] [--only B1,B2,...]``

Needs PostgreSQL and Redis on localhost (``DATABASE_URL``, default the ``kanban_bench``
database; ``REDIS_URL``, default db 0 with the ``bench`` prefix). Starts its own daphne
workers and baseline servers, prints a table, writes ``bench/results/latest.json`` and
``bench/results/latest.png``.

Exit status: 2 when a measure failed to run; 1 when a full run missed a target; 0 otherwise.
``--quick`` checks that the harness works, not the numbers: it never fails on a target.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench import env
from bench.stats import Figure

MEASURES = (
    "B1",
    "B2",
    "B3",
    "B4",
    "B6",
    "B7",
    "B8",
    "U1",
    "U2",
    "U4",
    "U5",
    "U6",
    "U7",
    "I1",
    "I2",
    "I3",
    "CAP",
)


@dataclass(frozen=True)
class Plan:
    rounds: int
    b1_count: int
    b2_count: int
    b3_seconds: float
    b4_fanouts: tuple[int, ...]
    b4_writes: int
    b6_connections: int
    b7_seconds: float
    b7_clients: tuple[int, ...]
    b8_calls: int
    u1_cards: int
    u2_viewers: tuple[int, ...]
    u2_writes: int
    u4_seconds: float
    u4_rate: float
    u5_seconds: float
    u5_viewers: int
    u6_seconds: float
    u6_rate: float
    u6_viewers: int
    cap_seconds: float
    cap_rates: tuple[float, ...]
    cap_viewers: tuple[int, int]
    cap_boards: int
    cap_board_rates: tuple[float, ...]
    i1_cards: int
    i1_items: int
    i1_comments: int
    i1_big_mb: int
    i2_cards: int
    i2_versions: int
    i2_attachment_mb: int
    i3_mb: int
    u7_sizes: tuple[int, ...]
    u7_rounds: int
    u7_pages: int
    u7_viewers: int


#: Each parameter of a run, side by side: (the full run's, ``--quick``'s).
PLANS: dict[str, tuple[Any, Any]] = {
    "rounds": (5, 2),
    "b1_count": (2000, 200),
    "b2_count": (1000, 100),
    "b3_seconds": (3.0, 0.5),
    "b4_fanouts": ((10, 100, 1000), (10, 100)),
    "b4_writes": (10, 2),
    "b6_connections": (5000, 100),
    "b7_seconds": (3.0, 1.0),
    "b7_clients": ((1, 4, 16), (4,)),
    "b8_calls": (2000, 200),
    "u1_cards": (1000, 1000),
    "u2_viewers": ((100, 1000), (10,)),
    "u2_writes": (10, 2),
    "u4_seconds": (10.0, 3.0),
    "u4_rate": (10.0, 5.0),
    "u5_seconds": (20.0, 3.0),
    "u5_viewers": (100, 10),
    "u6_seconds": (10.0, 1.0),
    "u6_rate": (10.0, 5.0),
    "u6_viewers": (1000, 15),
    "cap_seconds": (5.0, 1.0),
    "cap_rates": ((5.0, 10.0, 20.0, 40.0, 80.0), (5.0,)),
    "cap_viewers": ((100, 1000), (5, 15)),
    # The many-boards capacity row (bench/many_boards.py): boards x 5 viewers, 2 workers.
    "cap_boards": (100, 6),
    "cap_board_rates": ((20.0, 40.0, 80.0, 160.0, 320.0), (10.0,)),
    # #38's targets (bench/moving_bench.py).
    "i1_cards": (5000, 200),
    "i1_items": (20000, 800),
    "i1_comments": (10000, 400),
    "i1_big_mb": (60, 2),
    "i2_cards": (1000, 50),
    "i2_versions": (10000, 500),
    "i2_attachment_mb": (50, 2),
    "i3_mb": (10, 1),
    # U7 also prints U8, U9, U1 at the largest size and the heap (bench/browser_bench.py).
    "u7_sizes": ((1000, 5000), (200,)),
    "u7_rounds": (5, 1),
    "u7_pages": (3, 1),
    "u7_viewers": (50, 5),
}
FULL = Plan(**{name: full for name, (full, _) in PLANS.items()})
QUICK = Plan(**{name: quick for name, (_, quick) in PLANS.items()})


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts, 2 rounds (CI)")
    parser.add_argument("--only", default=",".join(MEASURES), help="comma-separated ids")
    parser.add_argument("--rounds", type=int, help="override the number of rounds")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results" / "latest.json"
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    plan = QUICK if args.quick else FULL
    if args.rounds:
        plan = Plan(**{**asdict(plan), "rounds": args.rounds})
    wanted = [m.strip().upper() for m in args.only.split(",") if m.strip()]
    unknown = sorted(set(wanted) - set(MEASURES))
    if unknown:
        print(f"unknown measures: {', '.join(unknown)}", file=sys.stderr)
        return 2
    settings = env.configure_environment()
    env.raise_open_files(4096)
    print(f"bench: {'quick' if args.quick else 'full'} run of {', '.join(wanted)}", flush=True)
    env.migrate()
    env.setup_django()
    scene = env.make_scene()
    namespace = f"bench.{os.urandom(4).hex()}"

    from bench import (
        board_bench,
        bridge_bench,
        browser_bench,
        engine_bench,
        many_boards,
        moving_bench,
        sdk_bench,
        spread_bench,
    )

    runners: dict[str, Callable[[], list[Figure]]] = {
        "B1": lambda: engine_bench.b1(rounds=plan.rounds, count=plan.b1_count, namespace=namespace),
        "B2": lambda: asyncio.run(
            bridge_bench.b2(rounds=plan.rounds, count=plan.b2_count, scene=scene)
        ),
        "B3": lambda: asyncio.run(
            bridge_bench.b3(
                rounds=plan.rounds, seconds=plan.b3_seconds, connections=20, scene=scene
            )
        ),
        "B4": lambda: asyncio.run(
            bridge_bench.b4(
                rounds=plan.rounds,
                fanouts=list(plan.b4_fanouts),
                writes=plan.b4_writes,
                scene=scene,
                redis_url=settings["REDIS_URL"],
            )
        ),
        "B6": lambda: asyncio.run(
            bridge_bench.b6(rounds=plan.rounds, connections=plan.b6_connections, scene=scene)
        ),
        "B7": lambda: engine_bench.b7(
            rounds=plan.rounds,
            seconds=plan.b7_seconds,
            namespace=namespace + ".b7",
            client_counts=list(plan.b7_clients),
        ),
        "B8": lambda: sdk_bench.b8(rounds=plan.rounds, calls=plan.b8_calls),
        "U1": lambda: board_bench.u1(rounds=plan.rounds, cards=plan.u1_cards, scene=scene),
        "U2": lambda: board_bench.u2(
            rounds=plan.rounds, viewers=plan.u2_viewers, writes=plan.u2_writes, scene=scene
        ),
        "U4": lambda: board_bench.u4(
            seconds=plan.u4_seconds, rate=plan.u4_rate, viewers=plan.u2_viewers, scene=scene
        ),
        "U5": lambda: board_bench.u5(seconds=plan.u5_seconds, viewers=plan.u5_viewers, scene=scene),
        "U6": lambda: spread_bench.u6(
            seconds=plan.u6_seconds, rate=plan.u6_rate, viewers=plan.u6_viewers, scene=scene
        ),
        "U7": lambda: browser_bench.u7(
            rounds=plan.u7_rounds,
            sizes=plan.u7_sizes,
            pages=plan.u7_pages,
            viewers=plan.u7_viewers,
            scene=scene,
        ),
        "I1": lambda: moving_bench.i1(
            cards=plan.i1_cards,
            items=plan.i1_items,
            comments=plan.i1_comments,
            big_mb=plan.i1_big_mb,
            scene=scene,
        ),
        "I2": lambda: moving_bench.i2(
            cards=plan.i2_cards, versions=plan.i2_versions, attachment_mb=plan.i2_attachment_mb
        ),
        "I3": lambda: moving_bench.i3(rounds=plan.rounds, megabytes=plan.i3_mb, scene=scene),
        "CAP": lambda: [
            *spread_bench.capacity(
                seconds=plan.cap_seconds,
                rates=plan.cap_rates,
                viewers=plan.cap_viewers,
                scene=scene,
            ),
            *many_boards.capacity(
                seconds=plan.cap_seconds,
                rates=plan.cap_board_rates,
                boards=plan.cap_boards,
                scene=scene,
            ),
        ],
    }
    figures: list[Figure] = []
    errors: dict[str, str] = {}
    for measure in wanted:
        started = time.monotonic()
        print(f"-- {measure} ...", flush=True)
        try:
            got = runners[measure]()
        except Exception:
            errors[measure] = traceback.format_exc()
            print(f"-- {measure} FAILED\n{errors[measure]}", file=sys.stderr, flush=True)
            continue
        figures += got
        print(f"-- {measure} done in {time.monotonic() - started:.0f} s", flush=True)

    from bench import report

    print()
    print(report.table(figures))
    recorded = {"plan": asdict(plan), "quick": args.quick}
    recorded.update(
        {k: v for k, v in settings.items() if k in ("REDIS_URL", "KANBAN_REDIS_PREFIX")}
    )
    report.write_json(figures, errors, recorded, args.out)
    report.write_chart(figures, args.out.with_suffix(".png"))
    print(f"\nwrote {args.out} and {args.out.with_suffix('.png')}")
    if errors:
        print(f"errors in: {', '.join(errors)}", file=sys.stderr)
        return 2
    missed = [f.id for f in figures if f.met is False]
    if missed:
        print(f"targets missed: {', '.join(missed)}")
        return 0 if args.quick else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
