"""Where a Board's time goes in Chromium, for a profile beside the bench's U1 and U8 rows.

    python -m bench.board_profile load 5000      # four loads: the page's marks and resources
    python -m bench.board_profile changes 5000   # 12 changes: CPU profile per renderer

``load`` prints, per load after a warm-up, the plugin page's performance marks
(``board:ready``, ``board:read``, ``board:index``, ``board:cards``, ``board:drawn``, set by
the Board) and when its files were all in, in ms from the frame's own start, and where
the frame starts in the host page's timeline. ``changes`` writes 12 changes (add, move,
edit, archive) through the bridge as bench U7 does and prints each renderer's CPU profile
(CDP ``Profiler``, 200 µs sampling) as self time per change, the busiest functions first.
Same environment as ``python -m bench`` (bench/env.py).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import sys
from typing import Any

from bench import env

MARKS_JS = """() => {
  const t = {};
  for (const e of performance.getEntriesByType("mark")) t[e.name] = Math.round(e.startTime);
  const files = performance.getEntriesByType("resource");
  t.files = files.length;
  t.files_in = Math.round(Math.max(...files.map((r) => r.responseEnd)));
  t.origin = performance.timeOrigin;
  return t;
}"""


def _seed(cards: int) -> Any:
    """A Board of ``cards`` cards (bench/browser_pages.py), made before the event loop runs."""
    from bench.browser_pages import seed

    return seed(env.make_scene(), cards)


async def load(board: Any) -> None:
    from playwright.async_api import async_playwright

    from bench.browser_pages import Viewer
    from bench.sdk_bench import CHROMIUM, CHROMIUM_ARGS

    with env.daphne() as server:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            viewer = await Viewer.open(browser, server, board, 0)
            for _ in range(4):
                took = await viewer.load(board)
                marks = await viewer.frame.evaluate(MARKS_JS)
                host = await viewer.page.evaluate("() => performance.timeOrigin")
                marks["frame_starts_at"] = round(marks.pop("origin") - host)
                print(f"load {took * 1000:.0f} ms; frame (ms from its start): {marks}", flush=True)
            await browser.close()


async def changes(board: Any, count: int = 12) -> None:
    from playwright.async_api import async_playwright

    from bench.bridge_bench import Wire, open_bridge
    from bench.browser_bench import KINDS, _model, _plan, _write
    from bench.browser_pages import Viewer
    from bench.sdk_bench import CHROMIUM, CHROMIUM_ARGS

    with env.daphne() as server:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            viewer = await Viewer.open(browser, server, board, 0)
            await asyncio.sleep(2)
            sessions = [await viewer.context.new_cdp_session(viewer.page)]
            # A sandboxed frame in a renderer of its own has a target of its own; one in the
            # page's process has none, and the page's profile holds it.
            with contextlib.suppress(Exception):
                sessions.append(await viewer.context.new_cdp_session(viewer.frame))
            for session in sessions:
                await session.send("Profiler.enable")
                await session.send("Profiler.setSamplingInterval", {"interval": 200})
                await session.send("Profiler.start")
            writer = Wire(await open_bridge(server, board.scene))
            model = await _model(writer)
            for n in range(count):
                change, card = _plan(KINDS[n % len(KINDS)], model, n)
                await _write(writer, model, change, card)
                await asyncio.sleep(0.5)
            for name, session in zip(("host page", "plugin frame"), sessions, strict=False):
                profile = (await session.send("Profiler.stop"))["profile"]
                _print_profile(name, profile, count)
            await browser.close()


def _print_profile(name: str, profile: dict[str, Any], count: int) -> None:
    nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
    spent: collections.Counter[str] = collections.Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        frame = nodes[sample]
        where = frame["url"].rsplit("/", 1)[-1]
        spent[f"{frame['functionName'] or '(anonymous)'} {where}:{frame['lineNumber']}"] += delta
    busy = sum(us for key, us in spent.items() if not key.startswith(("(idle)", "(program)")))
    print(f"{name}: {busy / 1000 / count:.1f} ms of script a change ({count} changes)")
    for key, us in spent.most_common(20):
        print(f"  {us / 1000 / count:7.2f} ms  {key}")


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2) or argv[0] not in ("load", "changes"):
        print(__doc__, file=sys.stderr)
        return 2
    cards = int(argv[1]) if len(argv) == 2 else 5000
    env.configure_environment()
    env.migrate()
    env.setup_django()
    board = _seed(cards)
    asyncio.run(load(board) if argv[0] == "load" else changes(board))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
