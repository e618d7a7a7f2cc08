"""U7-U9 and the heap: the Board in real Chromium pages, beside the simulated viewers.

- U7: a change written by alice (through the bridge, as the Board writes it) until it is in
  the DOM of each other person's Chromium Board: an add, a move, an edit and an archive, on
  1,000- and 5,000-card boards, with three Chromium pages (bob, carol, dave, each in a
  browser context of its own) and 50 simulated viewers (bench/viewers.py) watching. Timed
  from the writer's acknowledgement to a ``MutationObserver`` in the page's plugin frame
  seeing the card's change; both ends read the same wall clock (``Date.now()`` in the page,
  ``time.time()`` here, one machine). The simulated viewers' lag for the very same writes
  is printed under each row (their ``time.monotonic()`` against the ack's), so a Board that
  is fast on the wire and slow in the browser shows as two rows that disagree.
- U8: on the first viewer page, per change: the ``longtask`` entries (a buffered
  ``PerformanceObserver`` in the plugin frame) from the write to the change's settling, the
  longest and their total; and the main thread's busy time, the CDP ``Performance`` metric
  ``TaskDuration`` of the plugin frame's renderer before and after (every task that
  thread ran for the change, long or not).
- U1 at the largest size: navigation until the board says it is drawn
  (``#board[aria-busy="false"]`` holding a card) and a frame has been painted after it.
- U9: a text filter at the largest size: the filter's value set and its ``input`` event
  sent in the page, until the board's DOM has not changed for 300 ms (the time of its last
  change).
- HEAP: the tab's JS heap (CDP ``JSHeapUsedSize`` of the host page and the plugin frame's
  renderer) on the first viewer page after the changes and a full collection (the heap
  before it is in the note).

Each change picks the top card of a column (and adds and moves put theirs on top), so a
Board that draws only the visible part of a long column still has them in its DOM.

The pages and boards are bench/browser_pages.py's.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from bench import env
from bench.board_bench import _pool, index_append
from bench.bridge_bench import Wire, close_all, open_bridge
from bench.browser_pages import (
    FILTER_JS,
    BrowserBoard,
    Viewer,
    chromium_missing,
    seed,
)
from bench.env import Scene, new_card
from bench.sdk_bench import CHROMIUM, CHROMIUM_ARGS
from bench.stats import Figure, at_most, percentile

KINDS = ("add", "move", "edit", "archive")
#: How long one change may take to reach every page before it counts as never seen.
CHANGE_TIMEOUT = 90.0
#: The renderers' CDP metrics U8 notes per change: wall time in tasks (what the figure is),
#: the main thread's CPU time (less swayed by a busy machine), and where the time went.
BREAKDOWN = (
    "TaskDuration",
    "ThreadTime",
    "ScriptDuration",
    "LayoutDuration",
    "RecalcStyleDuration",
)


# --- the changes ---------------------------------------------------------------------------


def _before(rank: str) -> str:
    """A Board rank just below ``rank`` (base-36 digits without trailing zeros, compared
    as strings): a zero slipped in before its last digit."""
    return rank[:-1] + "0" + rank[-1]


@dataclass
class Model:
    """The board as alice's writes leave it: card id -> stored value."""

    cards: dict[str, dict[str, Any]]
    index: list[str]
    touched: set[str] = field(default_factory=set)

    def column(self, column: str) -> list[dict[str, Any]]:
        shown = [
            c
            for c in self.cards.values()
            if c.get("column") == column and not c.get("archived") and not c.get("deleted")
        ]
        return sorted(shown, key=lambda c: c.get("rank", "i"))

    def top_untouched(self, column: str) -> dict[str, Any]:
        card = next(c for c in self.column(column) if c["id"] not in self.touched)
        self.touched.add(card["id"])
        return card

    def top_rank(self, column: str) -> str:
        shown = self.column(column)
        return _before(shown[0]["rank"]) if shown else "i"


async def _model(writer: Wire) -> Model:
    index = (await writer.call("get", key="board:cards"))["result"]["value"]
    cards: dict[str, dict[str, Any]] = {}
    for start in range(0, len(index), 256):
        batch = [f"card:{i}" for i in index[start : start + 256]]
        reply = await writer.call("getMany", value=batch)
        for card_id, result in zip(index[start : start + 256], reply["result"], strict=True):
            if result.get("found"):
                cards[card_id] = result["value"]
    return Model(cards, list(index))


@dataclass
class Change:
    kind: str
    card_id: str
    key: str
    #: what the pages watch for (WATCH_JS's spec)
    spec: dict[str, Any]
    sent: float = 0.0  # epoch ms, when the write went
    ack: float = 0.0  # epoch ms, when its (last) reply came
    ack_monotonic: float = 0.0
    revision: str = ""


def _plan(kind: str, model: Model, n: int) -> tuple[Change, dict[str, Any]]:
    """The change and the card value alice writes for it."""
    card: dict[str, Any]
    spec: dict[str, Any]
    if kind == "add":
        card_id = f"u7{n:04d}{random.randrange(36**4):04x}"
        card = new_card(card_id, title=f"Added by the bench {n}", rank=model.top_rank("todo"))
        spec = {"selector": f'[data-card-id="{card_id}"]', "text": None, "absent": False}
    elif kind == "move":
        card = model.top_untouched("doing")
        card = {**card, "column": "done", "rank": model.top_rank("done")}
        selector = f'[data-list-for="done"] [data-card-id="{card["id"]}"]'
        spec = {"selector": selector, "text": None, "absent": False}
    elif kind == "edit":
        card = model.top_untouched("todo")
        title = f"Edited by the bench {n} {random.randrange(36**4):04x}"
        card = {**card, "title": title}
        selector = f'[data-card-id="{card["id"]}"] [data-testid="card-title"]'
        spec = {"selector": selector, "text": title, "absent": False}
    else:
        card = model.top_untouched("done")
        card = {**card, "archived": True}
        spec = {"selector": f'[data-card-id="{card["id"]}"]', "text": None, "absent": True}
    model.touched.add(card["id"])
    return Change(kind, card["id"], f"card:{card['id']}", spec), card


async def _write(writer: Wire, model: Model, change: Change, card: dict[str, Any]) -> None:
    """What the Board writes: an add is the card (only if absent), then the index with its
    id appended (compare-and-set); the others the card's key."""
    change.sent = time.time() * 1000
    if change.kind == "add":
        reply = await writer.call("set", key=change.key, value=card, expectedRevision=None)
        change.revision = reply["result"]["revision"]
        await index_append(writer, change.card_id)
        model.index.append(change.card_id)
    else:
        reply = await writer.call("set", key=change.key, value=card)
        change.revision = reply["result"]["revision"]
    change.ack, change.ack_monotonic = time.time() * 1000, time.monotonic()
    model.cards[change.card_id] = card


@dataclass
class Outcome:
    change: Change
    #: per page: ms from the ack to the MutationObserver (None: never within the timeout)
    lags: list[float | None]
    painted: list[float | None]
    long_tasks: list[float]
    busy_ms: float | None
    #: CDP metric -> ms it grew by over the change (BREAKDOWN), summed over the renderers
    spent: dict[str, float] = field(default_factory=dict)


async def _one_change(
    viewers: list[Viewer], writer: Wire, model: Model, kind: str, n: int
) -> Outcome:
    change, card = _plan(kind, model, n)
    tag = f"{kind}-{n}"
    await asyncio.gather(*(v.watch(tag, change.spec) for v in viewers))
    probe = viewers[0]
    before = await probe.metrics()
    await _write(writer, model, change, card)
    lags: list[float | None] = [None] * len(viewers)
    painted: list[float | None] = [None] * len(viewers)
    deadline = time.monotonic() + CHANGE_TIMEOUT
    while time.monotonic() < deadline and any(lag is None for lag in lags):
        for i, viewer in enumerate(viewers):
            if lags[i] is None:
                seen, drawn = await viewer.seen(tag)
                if seen is not None:
                    lags[i] = seen - change.ack
                    painted[i] = None if drawn is None else drawn - change.ack
        await asyncio.sleep(0.005 if all(v.binding for v in viewers) else 0.02)
    await asyncio.sleep(0.3)  # a task the change started, then the observer's report of it
    after = await probe.metrics()
    for i, viewer in enumerate(viewers):  # the frame after the change is painted by now
        if lags[i] is not None and painted[i] is None:
            drawn = (await viewer.seen(tag))[1]
            painted[i] = None if drawn is None else drawn - change.ack
    tasks = await probe.long_tasks(change.sent - 5, time.time() * 1000)
    spent = {
        name: 1000
        * sum(a.get(name, 0.0) - b.get(name, 0.0) for a, b in zip(after, before, strict=True))
        for name in BREAKDOWN
    }
    busy = spent["TaskDuration"] if before and all("TaskDuration" in m for m in after) else None
    return Outcome(change, lags, painted, tasks, busy, spent)


# --- one board size ------------------------------------------------------------------------


@dataclass
class SizeResult:
    cards: int
    pages: int
    viewers: int
    opened: list[float]
    outcomes: list[Outcome]
    sim: dict[str, list[float]]
    sim_missed: dict[str, int]
    #: the first viewer's tab: used JS heap in MB, as it was and after a full collection
    heap_mb: tuple[float, float] | None
    card_nodes: int
    u1: list[float] = field(default_factory=list)
    u1_nodes: int = 0
    u9: list[dict[str, Any]] = field(default_factory=list)
    failure: str = ""
    #: the probe's main thread busy per second with nothing changing; its renderers
    idle_ms_per_s: float | None = None
    renderers: int = 1


def _sim_lags(
    report: dict[str, Any], outcomes: list[Outcome]
) -> tuple[dict[str, list[float]], dict[str, int]]:
    lags: dict[str, list[float]] = {kind: [] for kind in KINDS}
    missed: dict[str, int] = {kind: 0 for kind in KINDS}
    for seen, appeared in zip(report["seen"], report["appeared"], strict=True):
        for outcome in outcomes:
            change = outcome.change
            if change.kind == "add":
                at = appeared.get(change.card_id)
            else:
                got = seen.get(change.key)
                at = got[1] if got and got[0] == change.revision else None
            if at is None:
                missed[change.kind] += 1
            else:
                lags[change.kind].append(1000 * (at - change.ack_monotonic))
    return lags, missed


async def _size(
    board: BrowserBoard, *, pages: int, sims: int, rounds: int, largest: bool
) -> SizeResult:
    from playwright.async_api import TimeoutError as PlaywrightTimeout
    from playwright.async_api import async_playwright

    with env.daphne() as server:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, "--enable-precise-memory-info"]
            )
            viewers: list[Viewer] = []
            for n in range(pages):  # one after another: each open is a U1 of its own
                started = time.monotonic()
                try:
                    viewers.append(await Viewer.open(browser, server, board, n))
                except PlaywrightTimeout:
                    took = time.monotonic() - started
                    await browser.close()
                    failure = f"page {n + 1} did not open within {took:.0f} s"
                    return SizeResult(
                        board.cards,
                        pages,
                        sims,
                        [v.opened for v in viewers] + [took],
                        [],
                        {},
                        {},
                        None,
                        0,
                        failure=failure,
                    )
            print(
                f"bench: {pages} Chromium Boards of {board.cards} cards open in "
                + ", ".join(f"{v.opened:.1f}" for v in viewers)
                + " s",
                flush=True,
            )
            await viewers[0].start_metrics()
            idle = await viewers[0].idle_ms_per_s()
            pool = await asyncio.to_thread(_pool, server, board.scene, sims, appearing=True)
            outcomes: list[Outcome] = []
            failure = ""
            try:
                writer = Wire(await open_bridge(server, board.scene))
                model = await _model(writer)
                n = 0
                for _ in range(rounds):
                    for kind in KINDS:
                        outcome = await _one_change(viewers, writer, model, kind, n)
                        outcomes.append(outcome)
                        n += 1
                        shown = ", ".join(
                            "never" if x is None else f"{x:.0f}" for x in outcome.lags
                        )
                        print(f"bench: U7 @{board.cards} {kind}: {shown} ms", flush=True)
                        if any(lag is None for lag in outcome.lags):
                            failure = f"a {kind} was not on every page within {CHANGE_TIMEOUT:g} s"
                            break
                    if failure:
                        break
                await asyncio.sleep(1.0)
                cards = [o.change.card_id for o in outcomes if o.change.kind == "add"]
                keys = [o.change.key for o in outcomes]
                report = await asyncio.to_thread(pool.report, keys, cards)
                await close_all([writer.socket])
            finally:
                await asyncio.to_thread(pool.close)
            sim, sim_missed = _sim_lags(report, outcomes)
            heap = await viewers[0].heap_mb()
            nodes = await viewers[0].card_nodes()
            result = SizeResult(
                board.cards,
                pages,
                sims,
                [v.opened for v in viewers],
                outcomes,
                sim,
                sim_missed,
                heap,
                nodes,
                failure=failure,
                idle_ms_per_s=idle,
                renderers=len(viewers[0].sessions),
            )
            for viewer in viewers[1:]:
                await viewer.context.close()
            if largest:
                await _u1_u9(viewers[0], board, rounds, result)
            await browser.close()
    return result


FILTERS = ("card 12", "card 345", "card 4999", "card 77", "card 2024")


async def _u1_u9(viewer: Viewer, board: BrowserBoard, rounds: int, result: SizeResult) -> None:
    """Loads of a fresh page of the first viewer's (the first warms the worker and the
    cache, and is dropped), then text filters on it, each cleared again."""
    page = viewer.page
    viewer.page = await viewer.context.new_page()
    await page.close()
    loads = [await viewer.load(board) for _ in range(rounds + 1)]
    result.u1 = loads[1:]
    result.u1_nodes = await viewer.card_nodes()
    for text in (FILTERS * rounds)[: max(rounds, 1)]:
        got = await viewer.frame.evaluate(FILTER_JS, text)
        got["text"] = text
        cleared = await viewer.frame.evaluate(FILTER_JS, "")
        got["clear_ms"] = cleared["ms"]
        result.u9.append(got)


# --- figures -------------------------------------------------------------------------------


def _breakdown(outcomes: list[Outcome]) -> str:
    """Medians per change of the main thread's CPU time, script, layout and style."""
    if not outcomes or not outcomes[0].spent:
        return ""
    names = {"ThreadTime": "CPU", "ScriptDuration": "script", "LayoutDuration": "layout"}
    names["RecalcStyleDuration"] = "style"
    return (
        "median "
        + ", ".join(
            f"{label} {statistics.median(o.spent.get(name, 0.0) for o in outcomes):.0f}"
            for name, label in names.items()
        )
        + " ms"
    )


def _ms(samples: list[float], fraction: float) -> float:
    return percentile(samples, fraction) if samples else float("inf")


def figures(result: SizeResult, *, largest: bool) -> list[Figure]:
    size = f"@{result.cards}"
    big = result.cards >= 5000
    out: list[Figure] = [
        Figure(
            f"U7 pages open {size}",
            "each Chromium Board's first load, one after another",
            "s",
            None,
            result.opened,
            f"STOPPED: {result.failure}" if result.failure and not result.outcomes else "",
        )
    ]
    setup = (
        f"{result.pages} Chromium Boards (other users) + {result.viewers} simulated viewers,"
        f" {result.cards} cards; pages opened in "
        + ", ".join(f"{s:.1f}" for s in result.opened)
        + " s"
        + (f"; STOPPED: {result.failure}" if result.failure else "")
    )
    for kind in KINDS:
        done = [o for o in result.outcomes if o.change.kind == kind]
        lags = [lag for o in done for lag in o.lags if lag is not None]
        never = sum(lag is None for o in done for lag in o.lags)
        painted = [p for o in done for p in o.painted if p is not None]
        sim = result.sim.get(kind, [])
        note = (
            f"{len(done)} {kind}s x {result.pages} pages; never seen {never};"
            f" painted (next frame) p50 {_ms(painted, 0.5):.0f} ms"
        )
        if kind == KINDS[0]:
            note = setup + "; " + note
        out.append(
            Figure(
                f"U7 {kind} p50 {size}",
                f"{kind} written -> in each other Chromium Board's DOM",
                "ms",
                None,
                [_ms(lags, 0.5)] if done else [],
                note,
            )
        )
        out.append(
            Figure(
                f"U7 {kind} p95 {size}",
                "the same, 95th percentile",
                "ms",
                at_most(250),
                [_ms(lags, 0.95) if not never else float("inf")] if done else [],
            )
        )
        out.append(
            Figure(
                f"U7 {kind} sim p95 {size}",
                "the same writes, the simulated viewers (no DOM)",
                "ms",
                None,
                [_ms(sim, 0.95)] if done else [],
                f"p50 {_ms(sim, 0.5):.0f} ms over {len(sim)};"
                f" missed {result.sim_missed.get(kind, 0)}",
            )
        )
    longest = [max(o.long_tasks, default=0.0) for o in result.outcomes]
    totals = [sum(o.long_tasks) for o in result.outcomes]
    busy = [o.busy_ms for o in result.outcomes if o.busy_ms is not None]
    out += [
        Figure(
            f"U8 longest task {size}",
            "the longest long task per change on a viewer's main thread",
            "ms",
            at_most(50) if big else None,
            [max(longest)] if longest else [],
            f"the most over {len(longest)} changes (median {statistics.median(longest):.0f} ms);"
            f" long tasks' total per change: median {statistics.median(totals):.0f} ms,"
            f" max {max(totals):.0f} ms"
            if longest
            else "",
        ),
        Figure(
            f"U8 main thread {size}",
            "the viewer's renderer busy per change (CDP TaskDuration)",
            "ms",
            at_most(8) if big else None,
            busy,
            _breakdown(result.outcomes) + "; "
            f"write to settled (+300 ms), {result.renderers} renderer(s): the host page's"
            + (" and the plugin frame's" if result.renderers > 1 else ", the frame's too")
            + (
                f"; idle: {result.idle_ms_per_s:.0f} ms/s"
                if result.idle_ms_per_s is not None
                else ""
            ),
        ),
    ]
    if result.heap_mb is not None:
        out.append(
            Figure(
                f"HEAP {size}",
                "the viewer tab's JS heap after the changes and a full GC (CDP JSHeapUsedSize)",
                "MB",
                at_most(150) if big else None,
                [result.heap_mb[1]],
                f"before the collection {result.heap_mb[0]:.1f} MB;"
                f" {result.card_nodes} card nodes in the DOM",
            )
        )
    if largest and result.u1:
        out.append(
            Figure(
                f"U1 first render {size}",
                "navigation to the drawn and painted Chromium Board",
                "s",
                at_most(1.0),
                result.u1,
                f"{result.u1_nodes} card nodes in the DOM",
            )
        )
    if largest and result.u9:
        cleared = [f["clear_ms"] for f in result.u9]
        out.append(
            Figure(
                f"U9 text filter {size}",
                "a filter typed (one input event) until the board's DOM settles",
                "ms",
                at_most(100),
                [f["ms"] for f in result.u9],
                "; ".join(f"'{f['text']}' shows {f['shown']}" for f in result.u9[:3])
                + f"; clearing: median {statistics.median(cleared):.0f} ms",
            )
        )
    return out


def u7(
    *, rounds: int, sizes: tuple[int, ...], pages: int, viewers: int, scene: Scene
) -> list[Figure]:
    missing = chromium_missing()
    if missing:
        print(f"bench: U7 skipped: {missing}", flush=True)
        return []
    out: list[Figure] = []
    for cards in sizes:
        largest = cards == max(sizes)
        board = seed(scene, cards)
        result = asyncio.run(
            _size(board, pages=pages, sims=viewers, rounds=rounds, largest=largest)
        )
        out += figures(result, largest=largest)
    return out
