"""U1-U4: the Board as its users live it, at realistic size.

- U1: first full render of a 1,000-card Board in headless Chromium (navigation to the
  1,000th card in the page).
- U2: one card moved elsewhere, until every viewer has it: simulated viewers that send what
  the real Board sends (bench/viewers.py, pinned by tests/browser/test_board_sync.py), in
  processes of their own, plus one real Chromium Board; at 100 and 1,000 viewers; p50 and
  p99 over all viewers and moves; missed changes.
- U3: bridge reads the real Board sends per move made elsewhere (0: the move was pushed).
- U4: sustained card moves for a while with the viewers watching: every viewer converges
  to the database's state; p99 write -> seen; at 100 and 1,000 viewers.
- U5: one card added per second (the card, then the index, as the Board writes them) with
  100 viewers and a Chromium Board: add -> shown on every viewer, p50 and p99; reads and
  keys read per viewer per add.

Each viewer figure notes the client's CPU beside it: on two cores, 1,000 viewers can be
what limits the run.

Absolute times for this machine; no baseline runs the same Board elsewhere, so these are
not ratios.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from bench import env
from bench.bridge_bench import Wire, close_all, open_bridge
from bench.env import Scene, Server, new_card
from bench.sdk_bench import CHROMIUM, CHROMIUM_ARGS
from bench.stats import Figure, at_most, percentile
from bench.viewers import Target, ViewerPool

CARDS = 1000


def board_scene(scene: Scene, cards: int) -> Scene:
    """The built-in Board plugin as a project of its own, ``cards`` cards on it, alice its
    owner; the returned scene names it."""
    from django.contrib.auth import get_user_model

    from kanban.access.memberships import membership_set
    from kanban.data.demo import PLUGINS, board_fill
    from kanban.projects.packages import project_import

    board = project_import(path=PLUGINS / "board")
    alice = get_user_model().objects.get(pk=scene.user_id)
    membership_set(user=alice, project=board, role="owner")
    board_fill(project_id=board.id, cards=cards, user=alice)
    return Scene(board_id=board.id, user_id=scene.user_id, cookie=scene.cookie)


def _chromium_board(server: Server, scene: Scene) -> Any:
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    context = browser.new_context(base_url=server.url)
    name, value = scene.cookie.split("=", 1)
    context.add_cookies([{"name": name, "value": value, "url": server.url}])
    return playwright, browser, context


def wait_drawn(page: Any, cards: int) -> None:
    """Until the Board holds all ``cards`` and has drawn them. It draws only the cards a
    column shows (windowing), so the last card's node is no sign: the page's own busy flag
    and its model are."""
    drawn = page.frame_locator("#plugin-frame").locator('#board[aria-busy="false"] [data-card-id]')
    drawn.first.wait_for(state="attached", timeout=60_000)
    frame = page.frame(url=lambda url: "/plugins/" in url)
    assert frame is not None
    # Polled from here: Playwright's wait_for_function evals its predicate in the page, which
    # the plugin's CSP (no 'unsafe-eval') refuses (tests/browser/demo_board.py waits so too).
    deadline = time.monotonic() + 60
    while frame.evaluate("boardDebug.state.cards.length") < cards:
        if time.monotonic() > deadline:
            held = frame.evaluate("boardDebug.state.cards.length")
            raise TimeoutError(f"the Board held {held} cards of {cards} after 60 s")
        page.wait_for_timeout(20)


def u1(*, rounds: int, cards: int, scene: Scene) -> list[Figure]:
    board = board_scene(scene, cards)
    with env.daphne() as server:
        playwright, browser, context = _chromium_board(server, board)
        try:
            page = context.new_page()
            times = []
            for _ in range(rounds + 1):  # the first load warms the worker and the cache
                started = time.perf_counter()
                page.goto(f"/boards/{board.board_id}/")
                wait_drawn(page, cards)
                times.append(time.perf_counter() - started)
        finally:
            browser.close()
            playwright.stop()
    return [
        Figure(
            "U1 first render",
            f"navigation to a {cards:,}-card headless Chromium Board held and drawn",
            "s",
            at_most(1.0),
            times[1:],
            note=f"{cards} cards",
        )
    ]


def _pool(server: Server, board: Scene, count: int, *, appearing: bool = False) -> ViewerPool:
    """``count`` simulated Boards (bench/viewers.py) in processes of their own: one per 250
    viewers, at most as many as the machine has cores, so the client is not the limit."""
    target = Target(
        ws_url=f"{server.ws_url}/ws/boards/{board.board_id}/",
        origin=server.url,
        cookie=board.cookie,
        track_appearing=appearing,
    )
    processes = int(os.environ.get("KANBAN_BENCH_VIEWER_PROCESSES", "0")) or max(
        1, min(os.cpu_count() or 1, -(-count // 250))
    )
    return ViewerPool([target] * count, processes)


def _card(board: Scene, card_id: str) -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    from kanban.data import target
    from kanban.data.kv import project_kv_get

    alice = get_user_model().objects.get(pk=board.user_id)
    entry = project_kv_get(
        target=target.Target(user=alice, project_id=board.board_id), key=f"card:{card_id}"
    )
    assert entry is not None
    return dict(entry.value)


def _move(card: dict[str, Any]) -> dict[str, Any]:
    """What the Board writes for a move: the card with its new column and rank."""
    columns = [c for c in ("todo", "doing", "done") if c != card.get("column")]
    rank = "".join(random.choice("abcdefghijklmnopqrstuvwxy") for _ in range(6)) + "z"
    return {**card, "column": random.choice(columns), "rank": rank}


class RealBoard:
    """One Chromium Board, driven from its own thread (Playwright's sync API stays on the
    thread that started it); ``frames`` is every frame its host sent on the websocket."""

    def __init__(self, server: Server, board: Scene) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.server, self.board = server, board
        self.frames: list[str] = []

    async def run(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    def _open(self) -> None:
        self.playwright, self.browser, context = _chromium_board(self.server, self.board)
        self.page = context.new_page()
        self.page.on(
            "websocket", lambda ws: ws.on("framesent", lambda text: self.frames.append(text))
        )
        self.page.goto(f"/boards/{self.board.board_id}/")
        wait_drawn(self.page, CARDS)
        # The drawn cards' attachments are asked for once the window settles: that read
        # belongs to the load, not to the first change measured.
        self.page.wait_for_timeout(500)

    def _settle(self) -> None:
        self.page.wait_for_timeout(300)  # Playwright hands over events while it waits

    def _cards(self) -> int:
        frame = self.page.frame(url=lambda url: "/plugins/" in url)
        assert frame is not None
        return int(frame.evaluate("boardDebug.state.cards.length"))

    def reads_since(self, start: int) -> list[str]:
        return [f for f in self.frames[start:] if '"op":"get' in f.replace(" ", "")]

    def _close(self) -> None:
        self.browser.close()
        self.playwright.stop()


def _lags(report: dict[str, Any], written: dict[str, tuple[str, float]]) -> tuple[list[float], int]:
    """Write -> seen for every viewer and key at the key's last written revision, and how
    many (viewer, key) never got there."""
    lags, diverged = [], 0
    for seen in report["seen"]:
        for key, (revision, at) in written.items():
            got = seen.get(key)
            if got is None or got[0] != revision:
                diverged += 1
            else:
                lags.append(got[1] - at)
    return lags, diverged


def _client_note(viewers: int, cpu: float, seconds: float) -> str:
    return (
        f"{viewers} viewers in their own processes; client CPU {cpu:.1f} s in {seconds:.1f} s"
        f" ({100 * cpu / max(seconds, 1e-9) / (os.cpu_count() or 1):.0f}% of the machine)"
    )


async def _u2(*, rounds: int, viewers: int, writes: int, board: Scene) -> list[Figure]:
    p50s, p99s, missed_total = [], [], 0
    sent_per_change: list[float] = []
    label = f"@{viewers}"
    with env.daphne() as server:
        real = RealBoard(server, board)
        await real.run(real._open)
        pool = await asyncio.to_thread(_pool, server, board, viewers)
        try:
            writer = Wire(await open_bridge(server, board))
            card_ids = [f"g{n:05d}" for n in range(CARDS - 5)]
            cpu_before, wall = pool.report([])["cpu"], time.monotonic()
            for _ in range(rounds):
                written: dict[str, tuple[str, float]] = {}
                for card_id in random.sample(card_ids, writes):
                    card = _move(await asyncio.to_thread(_card, board, card_id))
                    before = len(real.frames)
                    started = time.monotonic()
                    reply = await writer.call("set", key=f"card:{card_id}", value=card)
                    written[f"card:{card_id}"] = (reply["result"]["revision"], started)
                    await real.run(real._settle)  # the real Board's reads are in by now
                    sent_per_change.append(len(real.reads_since(before)))
                await asyncio.sleep(1.0)
                report = await asyncio.to_thread(pool.report, list(written))
                lags, missed = _lags(report, written)
                missed_total += missed
                p50s.append(percentile(lags, 0.5) * 1000)
                p99s.append(percentile(lags, 0.99) * 1000)
            cpu = report["cpu"] - cpu_before
            await close_all([writer.socket])
        finally:
            await asyncio.to_thread(pool.close)
            await real.run(real._close)
    note = (
        _client_note(viewers, cpu, time.monotonic() - wall) + f", +1 Chromium Board, {CARDS} cards"
    )
    return [
        Figure(
            f"U2 write->seen p50 {label}",
            "one card moved, until every viewer has it",
            "ms",
            None,
            p50s,
            note,
        ),
        Figure(
            f"U2 write->seen p99 {label}", "the same, 99th percentile", "ms", at_most(250), p99s
        ),
        Figure(
            f"U2 missed {label}",
            "viewers that never had a move",
            "changes",
            at_most(0),
            [missed_total],
        ),
        Figure(
            f"U3 reads/change {label}",
            "bridge reads the real Board sends per card moved elsewhere",
            "requests",
            at_most(0),
            [max(sent_per_change)],
        ),
    ]


def u2(*, rounds: int, viewers: tuple[int, ...], writes: int, scene: Scene) -> list[Figure]:
    board = board_scene(scene, CARDS)
    figures: list[Figure] = []
    for count in viewers:
        figures += asyncio.run(_u2(rounds=rounds, viewers=count, writes=writes, board=board))
    return figures


async def drive_moves(
    writer: Wire | Sequence[Wire], board: Scene, *, seconds: float, rate: float
) -> tuple[dict[str, tuple[str, float]], int]:
    """Card moves at ``rate`` a second in all for ``seconds`` through ``writer`` (several
    share the rate, each moving cards of its own, so that one socket's round trip is not
    the ceiling): each key's last written revision and when it was written, and how many
    moves went."""
    writers = [writer] if isinstance(writer, Wire) else list(writer)
    card_ids = [f"g{n:05d}" for n in range(CARDS - 5)]
    written: dict[str, tuple[str, float]] = {}
    end = time.monotonic() + seconds
    moves = 0

    async def move(wire: Wire, cards: list[str]) -> None:
        nonlocal moves
        while time.monotonic() < end:
            started = time.monotonic()
            card_id = random.choice(cards)
            card = _move(await asyncio.to_thread(_card, board, card_id))
            reply = await wire.call("set", key=f"card:{card_id}", value=card)
            written[f"card:{card_id}"] = (reply["result"]["revision"], started)
            moves += 1
            pause = len(writers) / rate - (time.monotonic() - started)
            await asyncio.sleep(max(0.0, pause))

    await asyncio.gather(
        *(move(wire, card_ids[n :: len(writers)]) for n, wire in enumerate(writers))
    )
    await asyncio.sleep(3.0)  # the last events land
    return written, moves


@dataclass(frozen=True)
class Seen:
    """Moves written through one worker, as a pool of viewers saw them."""

    moves: int
    keys: int
    lags: list[float]
    diverged: int
    #: the viewers' CPU seconds over ``seconds`` of wall time
    client_cpu: float
    seconds: float

    def diverged_figure(self, id: str, note: str = "") -> Figure:
        """The bar U4 and U6 both hold the viewers to: every key at the database's last
        revision once the moves are written."""
        return Figure(
            id,
            "viewer keys not at the database's last revision",
            "keys",
            at_most(0),
            [self.diverged],
            note,
        )


async def moves_seen(
    pool: ViewerPool, writer_server: Server, board: Scene, *, seconds: float, rate: float
) -> Seen:
    """Card moves written at ``rate`` for ``seconds`` through one socket: write -> seen
    lags over every viewer and move, and viewer keys not at the last revision."""
    writer = Wire(await open_bridge(writer_server, board))
    cpu_before, wall = pool.report([])["cpu"], time.monotonic()
    written, moves = await drive_moves(writer, board, seconds=seconds, rate=rate)
    report = await asyncio.to_thread(pool.report, list(written))
    lags, diverged = _lags(report, written)
    await close_all([writer.socket])
    cpu, spent = report["cpu"] - cpu_before, time.monotonic() - wall
    return Seen(moves, len(written), lags, diverged, cpu, spent)


async def _u4(*, seconds: float, rate: float, viewers: int, board: Scene) -> list[Figure]:
    label = f"@{viewers}"
    with env.daphne() as server:
        pool = await asyncio.to_thread(_pool, server, board, viewers)
        try:
            seen = await moves_seen(pool, server, board, seconds=seconds, rate=rate)
        finally:
            await asyncio.to_thread(pool.close)
    note = (
        f"{seen.moves} moves in {seconds:g} s (asked {rate:g}/s), {seen.keys} keys; "
        + _client_note(viewers, seen.client_cpu, seen.seconds)
    )
    return [
        seen.diverged_figure(f"U4 diverged {label}", note),
        Figure(
            f"U4 write->seen p99 {label}",
            "sustained moves, 99th percentile",
            "ms",
            at_most(500),
            [percentile(seen.lags, 0.99) * 1000] if seen.lags else [float("inf")],
        ),
    ]


def u4(*, seconds: float, rate: float, viewers: tuple[int, ...], scene: Scene) -> list[Figure]:
    board = board_scene(scene, CARDS)
    figures: list[Figure] = []
    for count in viewers:
        figures += asyncio.run(_u4(seconds=seconds, rate=rate, viewers=count, board=board))
    return figures


async def _add_card(writer: Wire, n: int) -> str:
    """What the Board writes for an add: the card (only if absent), then the index with its
    id appended, compare-and-set on the index's revision."""
    card_id = f"u5{n:04d}{random.randrange(36**4):04x}"
    card = {**new_card(card_id, title=f"Added {n}", rank=f"z{n:04d}"), "item": None}
    await writer.call("set", key=f"card:{card_id}", value=card, expectedRevision=None)
    await index_append(writer, card_id)
    return card_id


async def index_append(writer: Wire, card_id: str) -> None:
    """The Board's index with ``card_id`` appended, compare-and-set on its revision, read
    again after each conflict with another writer."""
    while True:
        index = (await writer.call("get", key="board:cards"))["result"]
        try:
            await writer.call(
                "set",
                key="board:cards",
                value=[*index["value"], card_id],
                expectedRevision=index["revision"],
            )
            return
        except RuntimeError as refused:
            if "conflict" not in str(refused):
                raise


async def _u5(*, seconds: float, viewers: int, board: Scene) -> list[Figure]:
    with env.daphne() as server:
        real = RealBoard(server, board)
        await real.run(real._open)
        pool = await asyncio.to_thread(_pool, server, board, viewers, appearing=True)
        try:
            writer = Wire(await open_bridge(server, board))
            loaded = pool.report([])
            first_frame = len(real.frames)
            cpu_before, wall = loaded["cpu"], time.monotonic()
            added: dict[str, float] = {}
            n = 0
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                started = time.monotonic()
                added[await _add_card(writer, n)] = started
                n += 1
                await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
            await asyncio.sleep(2.0)
            report = await asyncio.to_thread(pool.report, [], list(added))
            await real.run(real._settle)
            shown = await real.run(real._cards)
            board_reads = len(real.reads_since(first_frame))
            await close_all([writer.socket])
        finally:
            await asyncio.to_thread(pool.close)
            await real.run(real._close)
    lags, never = [], 0
    for appeared in report["appeared"]:
        for card_id, at in added.items():
            if appeared.get(card_id) is None:
                never += 1
            else:
                lags.append(appeared[card_id] - at)
    requests = [
        (after - before) / len(added)
        for after, before in zip(report["requests"], loaded["requests"], strict=True)
    ]
    keys = [
        (after - before) / len(added)
        for after, before in zip(report["keys_read"], loaded["keys_read"], strict=True)
    ]
    note = (
        f"{len(added)} adds, 1/s, on {CARDS} cards; the Chromium Board shows {shown} cards and"
        f" sent {board_reads} reads; "
        + _client_note(viewers, report["cpu"] - cpu_before, time.monotonic() - wall)
    )
    return [
        Figure(
            "U5 add->seen p50",
            "one card added, until every viewer shows it",
            "ms",
            None,
            [percentile(lags, 0.5) * 1000] if lags else [float("inf")],
            note,
        ),
        Figure(
            "U5 add->seen p99",
            "the same, 99th percentile",
            "ms",
            at_most(250),
            [percentile(lags, 0.99) * 1000] if lags else [float("inf")],
        ),
        Figure("U5 never seen", "(viewer, card) pairs never shown", "cards", at_most(0), [never]),
        Figure(
            "U5 requests/add",
            "reads per viewer per add (the most of any viewer)",
            "requests",
            at_most(0),
            [max(requests)],
        ),
        Figure(
            "U5 keys read/add", "keys read per viewer per add (the most)", "keys", None, [max(keys)]
        ),
        Figure(
            "U5 Chromium reads/add",
            "reads the real Board sent per add",
            "requests",
            at_most(0),
            [board_reads / len(added)],
        ),
    ]


def u5(*, seconds: float, viewers: int, scene: Scene) -> list[Figure]:
    board = board_scene(scene, CARDS)
    return asyncio.run(_u5(seconds=seconds, viewers=viewers, board=board))
