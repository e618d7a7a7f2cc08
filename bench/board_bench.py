"""U1-U4: the Board as its users live it, at realistic size.

- U1: first full render of a 1,000-card Board in headless Chromium (navigation to the
  1,000th card in the page).
- U2: one card written elsewhere, until every viewer has read it again: simulated viewers
  that behave like the Board (``watch``, then ``getMany`` of the keys an event names), plus
  one real Chromium Board; p50 and p99 over all viewers and writes; missed changes.
- U3: bridge requests the real Board sends per change made elsewhere.
- U4: sustained card moves for a while with the viewers watching: every viewer converges
  to the database's state; p99 write -> seen.

Absolute times for this machine; no baseline runs the same Board elsewhere, so these are
not ratios.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection

from bench import env
from bench.bridge_bench import Wire, close_all, open_bridge, open_many
from bench.env import Scene, Server
from bench.sdk_bench import CHROMIUM, CHROMIUM_ARGS
from bench.stats import Figure, at_most, percentile

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


@dataclass
class Viewer:
    """A simulated Board: watches every key, re-reads what an event names."""

    socket: ClientConnection
    ids: Any = field(default_factory=lambda: iter(range(1, 1 << 30)))
    #: key -> revision this viewer last read, and when it read it
    seen: dict[str, tuple[str, float]] = field(default_factory=dict)
    missed: int = 0

    async def start(self) -> None:
        await self.socket.send(json.dumps({"v": 1, "id": next(self.ids), "op": "watch"}))

    async def run(self) -> None:
        async for text in self.socket:
            frame = json.loads(text)
            if frame.get("event") == "changes" and frame["changes"]:
                keys = [c["key"] for c in frame["changes"]]
                rid = next(self.ids)
                await self.socket.send(
                    json.dumps({"v": 1, "id": rid, "op": "getMany", "value": keys})
                )
            elif frame.get("ok") and isinstance(frame.get("result"), list):
                now = time.perf_counter()
                for result in frame["result"]:
                    if result.get("found"):
                        key = result["value"].get("id")
                        self.seen[f"card:{key}"] = (result["revision"], now)


def _chromium_board(server: Server, scene: Scene) -> Any:
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    context = browser.new_context(base_url=server.url)
    name, value = scene.cookie.split("=", 1)
    context.add_cookies([{"name": name, "value": value, "url": server.url}])
    return playwright, browser, context


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
                cards_in_page = page.frame_locator("#plugin-frame").locator("[data-card-id]")
                cards_in_page.nth(cards - 1).wait_for(state="attached", timeout=60_000)
                times.append(time.perf_counter() - started)
        finally:
            browser.close()
            playwright.stop()
    return [
        Figure(
            "U1 first render",
            f"navigation to the {cards:,}th card in a headless Chromium Board",
            "s",
            at_most(1.0),
            times[1:],
            note=f"{cards} cards",
        )
    ]


async def _viewers(server: Server, scene: Scene, count: int) -> tuple[list[Viewer], list[Any]]:
    sockets = await open_many(count, lambda: open_bridge(server, scene))
    viewers = [Viewer(s) for s in sockets]
    for viewer in viewers:
        await viewer.start()
    tasks = [asyncio.create_task(v.run()) for v in viewers]
    await asyncio.sleep(0.5)  # every watch is in place
    return viewers, tasks


def _card(board: Scene, card_id: str) -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    from kanban.data.kv import project_kv_get

    alice = get_user_model().objects.get(pk=board.user_id)
    entry = project_kv_get(user=alice, project_id=board.board_id, key=f"card:{card_id}")
    assert entry is not None
    return dict(entry.value)


async def _write_and_wait(
    writer: Wire, viewers: list[Viewer], key: str, value: Any, timeout: float = 10.0
) -> tuple[list[float], int]:
    """One write; how long each viewer took to read its new revision, and how many never did."""
    started = time.perf_counter()
    reply = await writer.call("set", key=key, value=value)
    revision = reply["result"]["revision"]
    deadline = started + timeout
    while time.perf_counter() < deadline:
        if all(v.seen.get(key, ("", 0))[0] == revision for v in viewers):
            break
        await asyncio.sleep(0.005)
    lags = [v.seen[key][1] - started for v in viewers if v.seen.get(key, ("",))[0] == revision]
    return lags, len(viewers) - len(lags)


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
        frame = self.page.frame_locator("#plugin-frame")
        frame.locator("[data-card-id]").nth(CARDS - 1).wait_for(state="attached", timeout=60_000)

    def _settle(self) -> None:
        self.page.wait_for_timeout(300)  # Playwright hands over events while it waits

    def _close(self) -> None:
        self.browser.close()
        self.playwright.stop()


async def _u2(*, rounds: int, viewers: int, writes: int, board: Scene) -> list[Figure]:
    p50s, p99s, missed_total = [], [], 0
    sent_per_change: list[float] = []
    with env.daphne() as server:
        real = RealBoard(server, board)
        await real.run(real._open)
        frames = real.frames
        try:
            crowd, tasks = await _viewers(server, board, viewers)
            writer = Wire(await open_bridge(server, board))
            card_ids = [f"g{n:05d}" for n in range(CARDS - 5)]
            for _ in range(rounds):
                lags: list[float] = []
                for n in range(writes):
                    card_id = random.choice(card_ids)
                    card = await asyncio.to_thread(_card, board, card_id)
                    card["title"] = f"Moved {n} at {time.time():.3f}"
                    before = len(frames)
                    got, missed = await _write_and_wait(writer, crowd, f"card:{card_id}", card)
                    lags += got
                    missed_total += missed
                    await real.run(real._settle)  # the real Board's reads are in by now
                    reads = [f for f in frames[before:] if '"op":"get' in f.replace(" ", "")]
                    sent_per_change.append(len(reads))
                p50s.append(percentile(lags, 0.5) * 1000)
                p99s.append(percentile(lags, 0.99) * 1000)
            await close_all([v.socket for v in crowd] + [writer.socket])
            for task in tasks:
                task.cancel()
        finally:
            await real.run(real._close)
    note = f"{viewers} websocket viewers + 1 Chromium Board, {CARDS} cards"
    return [
        Figure(
            "U2 write->seen p50",
            "one card written, until every viewer read it",
            "ms",
            None,
            p50s,
            note,
        ),
        Figure("U2 write->seen p99", "the same, 99th percentile", "ms", at_most(250), p99s),
        Figure(
            "U2 missed",
            "viewers that never read a write within 10 s",
            "changes",
            at_most(0),
            [missed_total],
        ),
        Figure(
            "U3 reads/change",
            "bridge reads the real Board sends per card changed elsewhere",
            "requests",
            at_most(2),
            [max(sent_per_change)],
            note=f"median {sorted(sent_per_change)[len(sent_per_change) // 2]}",
        ),
    ]


def u2(*, rounds: int, viewers: int, writes: int, scene: Scene) -> list[Figure]:
    board = board_scene(scene, CARDS)
    return asyncio.run(_u2(rounds=rounds, viewers=viewers, writes=writes, board=board))


async def _u4(*, seconds: float, rate: float, viewers: int, board: Scene) -> list[Figure]:
    with env.daphne() as server:
        crowd, tasks = await _viewers(server, board, viewers)
        writer = Wire(await open_bridge(server, board))
        card_ids = [f"g{n:05d}" for n in range(CARDS - 5)]
        written: dict[str, tuple[str, float]] = {}
        end = time.perf_counter() + seconds
        columns = ("todo", "doing", "done")
        while time.perf_counter() < end:
            started = time.perf_counter()
            card_id = random.choice(card_ids)
            card = await asyncio.to_thread(_card, board, card_id)
            card["column"] = random.choice(columns)
            reply = await writer.call("set", key=f"card:{card_id}", value=card)
            written[f"card:{card_id}"] = (reply["result"]["revision"], started)
            await asyncio.sleep(max(0.0, 1 / rate - (time.perf_counter() - started)))
        await asyncio.sleep(2.0)  # the last events land
        lags, diverged = [], 0
        for viewer in crowd:
            for key, (revision, at) in written.items():
                seen = viewer.seen.get(key)
                if seen is None or seen[0] != revision:
                    diverged += 1
                else:
                    lags.append(seen[1] - at)
        await close_all([v.socket for v in crowd] + [writer.socket])
        for task in tasks:
            task.cancel()
    note = f"{rate:g} moves/s for {seconds:g} s, {viewers} viewers, {len(written)} keys"
    return [
        Figure(
            "U4 diverged",
            "viewer keys not at the database's last revision",
            "keys",
            at_most(0),
            [diverged],
            note,
        ),
        Figure(
            "U4 write->seen p99",
            "sustained moves, 99th percentile",
            "ms",
            at_most(500),
            [percentile(lags, 0.99) * 1000],
        ),
    ]


def u4(*, seconds: float, rate: float, viewers: int, scene: Scene) -> list[Figure]:
    board = board_scene(scene, CARDS)
    return asyncio.run(_u4(seconds=seconds, rate=rate, viewers=viewers, board=board))
