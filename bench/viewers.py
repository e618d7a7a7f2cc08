"""Simulated Board viewers that send what the real Board sends, for every kind of change.

``BoardViewer`` is a Python port of the Board plugin's sync (bridge_js/plugins/board/
board-sync.js, with board-changes.js's ``createStore``): it watches every key, reads the
whole board once (``getMany`` of the columns and the index, then the cards in batches of
256), applies each change event's pushed values in order, and reads only what came without
a value or what an index change names that it neither holds nor was sent; a ``resync``
reads everything again. tests/browser/test_board_sync.py pins that it sends the same reads as the
real Board in Chromium, kind by kind.

``ViewerPool`` runs many of them in processes of their own, so that with 1,000 viewers on
two cores the client is not what is measured; it reports their CPU time beside the figures.
"""

from __future__ import annotations

import asyncio
import gc
import json
import multiprocessing
import resource
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from bench.wsclient import Link, open_link

COLUMNS_KEY = "board:columns"
INDEX_KEY = "board:cards"
READ_BATCH = 256


def is_board_key(key: str) -> bool:
    return key in (COLUMNS_KEY, INDEX_KEY) or key.startswith("card:")


def index_ids(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return list(dict.fromkeys(v for v in value if isinstance(v, str)))


def is_card(value: Any) -> bool:
    return isinstance(value, dict) and not value.get("deleted")


@dataclass
class BoardViewer:
    link: Link
    #: key -> its value as this viewer holds it (None: absent)
    values: dict[str, Any] = field(default_factory=dict)
    #: key -> (revision, when it was applied), for the keys it was sent or read
    seen: dict[str, tuple[str, float]] = field(default_factory=dict)
    #: card id -> when it first was on this viewer's board
    appeared: dict[str, float] = field(default_factory=dict)
    requests: int = 0
    keys_read: int = 0
    #: reads the server answered ``unavailable`` (and that were asked again)
    unavailable: int = 0
    loads: int = 0
    #: every read this viewer sent, as (op, keys) (the pin test compares them)
    reads: list[tuple[str, list[str]]] = field(default_factory=list)
    track_appearing: bool = False
    started: bool = False
    _busy: bool = False
    _next_id: int = 0
    _replies: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    _events: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)

    async def _call(self, op: str, **fields: Any) -> Any:
        self._next_id += 1
        rid = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._replies[rid] = future
        self.link.send(json.dumps({"v": 1, "id": rid, "op": op, **fields}))
        # A socket the server closed answers nothing more: say so rather than wait forever.
        await asyncio.wait([future, self.link.closed], return_when=asyncio.FIRST_COMPLETED)
        if not future.done():
            self._replies.pop(rid, None)
            raise ConnectionError(
                f"the server closed the socket ({self.link.close_code}) during {op}"
            )
        return future.result()

    def hear(self, text: str) -> None:
        """One message from the server (the link calls this, in order)."""
        frame = json.loads(text)
        if "id" in frame and "ok" in frame:
            future = self._replies.pop(frame["id"], None)
            if future is not None and not future.done():
                future.set_result(frame)
        elif frame.get("event") == "changes":
            # The common case, every value pushed and nothing queued: applied at once, as the
            # Board does, without a task hop (1,000 viewers on two cores are mostly this).
            if self.started and self._events.empty() and not self._busy and self._all_pushed(frame):
                self._apply_pushed(frame["changes"])
            else:
                self._events.put_nowait(frame)

    def _all_pushed(self, frame: dict[str, Any]) -> bool:
        if frame.get("resync"):
            return False
        for change in frame["changes"]:
            if (
                is_board_key(change["key"])
                and "value" not in change
                and change.get("deleted") is not True
            ):
                return False
        return not self._missing_after(frame["changes"])

    def _missing_after(self, changes: list[dict[str, Any]]) -> bool:
        """Whether applying these changes leaves index ids without their card held."""
        index = next((c for c in changes if c["key"] == INDEX_KEY), None)
        if index is None:
            return False
        held = {c["key"] for c in changes} | set(self.values)
        return any(f"card:{i}" not in held for i in index_ids(index.get("value")))

    def _apply_pushed(self, changes: list[dict[str, Any]]) -> None:
        now = time.monotonic()
        for change in changes:
            if is_board_key(change["key"]):
                self.values[change["key"]] = (
                    None if change.get("deleted") is True else change["value"]
                )
                self.seen[change["key"]] = (change["revision"], now)
        self._note_appeared(now)

    async def _read(self, keys: list[str]) -> None:
        """The keys' values, READ_BATCH per request, the requests in parallel."""
        batches = [keys[i : i + READ_BATCH] for i in range(0, len(keys), READ_BATCH)]
        for batch in batches:
            self.reads.append(("getMany", batch))
        self.requests += len(batches)
        self.keys_read += len(keys)
        results = await asyncio.gather(*(self._read_batch(b) for b in batches))
        now = time.monotonic()
        for batch, reply in zip(batches, results, strict=True):
            for key, result in zip(batch, reply["result"], strict=True):
                self.values[key] = result.get("value") if result.get("found") else None
                if result.get("found"):
                    self.seen[key] = (result["revision"], now)

    async def _read_batch(self, keys: list[str]) -> dict[str, Any]:
        """One getMany; asked again, as a page would, while the server says it is
        unavailable (its database did not answer in time), and counted."""
        for attempt in range(1, 11):
            reply: dict[str, Any] = await self._call("getMany", value=keys)
            if reply.get("ok"):
                return reply
            if reply["error"]["code"] != "unavailable":
                raise RuntimeError(f"getMany refused: {reply['error']}")
            self.unavailable += 1
            await asyncio.sleep(0.25 * attempt)
        raise RuntimeError("getMany stayed unavailable over ten tries")

    def _missing(self) -> list[str]:
        ids = index_ids(self.values.get(INDEX_KEY))
        return [f"card:{i}" for i in ids if f"card:{i}" not in self.values]

    async def load(self) -> None:
        """Watch first, then read everything (as the Board does on its first load)."""
        self.loads += 1
        self.values.clear()
        await self._read([COLUMNS_KEY, INDEX_KEY])
        await self._read(self._missing())
        self._note_appeared(time.monotonic())

    def _note_appeared(self, now: float) -> None:
        if not self.track_appearing:
            return
        for card_id in index_ids(self.values.get(INDEX_KEY)):
            if card_id not in self.appeared and is_card(self.values.get(f"card:{card_id}")):
                self.appeared[card_id] = now

    async def apply(self, changes: Iterable[dict[str, Any]]) -> None:
        now = time.monotonic()
        unread = []
        for change in changes:
            key = change["key"]
            if not is_board_key(key):
                continue
            if change.get("deleted") is True:
                self.values[key] = None
                self.seen[key] = (change["revision"], now)
            elif "value" in change:
                self.values[key] = change["value"]
                self.seen[key] = (change["revision"], now)
            else:
                unread.append(key)
        wanted = list(dict.fromkeys([*unread, *self._missing()]))
        if wanted:
            await self._read(wanted)
        self._note_appeared(time.monotonic())

    async def start(self) -> None:
        await self._call("watch")
        await self.load()
        self._applier = asyncio.create_task(self._apply_events())
        self.started = True

    async def _apply_events(self) -> None:
        # One event after another: an event's read never lets a later one go first, and
        # events that came during the first load wait for it.
        while True:
            frame = await self._events.get()
            self._busy = True
            try:
                if frame.get("resync"):
                    await self.load()
                else:
                    await self.apply(frame["changes"])
            finally:
                self._busy = self._events.qsize() > 0

    def stop(self) -> None:
        applier = getattr(self, "_applier", None)
        if applier is not None:
            applier.cancel()
        self.link.close()


async def open_viewer(
    url: str, cookie: str, origin: str, *, track_appearing: bool = False, attempts: int = 5
) -> BoardViewer:
    """A viewer whose socket is open and past its opening context event, not yet started.
    A worker busy with many loads may accept late; like a Board's host, this tries again a
    few times, after a pause."""
    for attempt in range(attempts):
        try:
            return await _open_once(url, cookie, origin, track_appearing)
        except (OSError, TimeoutError):
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(1 + attempt)
    raise AssertionError("unreachable")


async def _open_once(url: str, cookie: str, origin: str, track_appearing: bool) -> BoardViewer:
    opening: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    started: list[BoardViewer] = []

    def hear(text: str) -> None:
        if started:
            started[0].hear(text)
        elif not opening.done():
            opening.set_result(text)

    link = await open_link(url, cookie=cookie, origin=origin, on_text=hear)
    first = json.loads(await asyncio.wait_for(opening, 120))
    if first.get("event") != "context":
        raise RuntimeError(f"the bridge opened with {first}, not its context")
    started.append(BoardViewer(link=link, track_appearing=track_appearing))
    return started[0]


# --- many viewers in processes of their own ----------------------------------------------


@dataclass(frozen=True)
class Target:
    ws_url: str
    origin: str
    cookie: str
    track_appearing: bool = False


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _serve(targets: list[Target], conn: Any) -> None:
    viewers: list[BoardViewer] = []
    for start in range(0, len(targets), 50):
        chunk = targets[start : start + 50]
        viewers += await asyncio.gather(
            *(
                open_viewer(t.ws_url, t.cookie, t.origin, track_appearing=t.track_appearing)
                for t in chunk
            )
        )
    await asyncio.gather(*(v.start() for v in viewers))
    # Hundreds of loaded boards are millions of objects; a full collection over them pauses
    # this process for hundreds of milliseconds, which would be the client's lag, not the
    # server's. What the load made is kept out of the collector's generations.
    gc.collect()
    gc.freeze()
    loop = asyncio.get_running_loop()
    conn.send(("ready", (len(viewers), sum(v.unavailable for v in viewers))))
    while True:
        command, argument = await loop.run_in_executor(None, conn.recv)
        if command == "report":
            keys: list[str] = argument["keys"]
            cards: list[str] = argument.get("cards", [])
            conn.send(
                (
                    "report",
                    {
                        "seen": [{k: v.seen.get(k) for k in keys} for v in viewers],
                        "appeared": [{c: v.appeared.get(c) for c in cards} for v in viewers],
                        "requests": [v.requests for v in viewers],
                        "keys_read": [v.keys_read for v in viewers],
                        "loads": [v.loads for v in viewers],
                        "cpu": _cpu_seconds(),
                    },
                )
            )
        elif command == "stop":
            for viewer in viewers:
                viewer.stop()
            conn.send(("stopped", None))
            return


def _process(targets: list[Target], conn: Any) -> None:
    import resource as limits
    import traceback

    soft, hard = limits.getrlimit(limits.RLIMIT_NOFILE)
    limits.setrlimit(limits.RLIMIT_NOFILE, (min(max(soft, 4096), hard), hard))
    try:
        asyncio.run(_serve(targets, conn))
    except BaseException:
        # Said to the bench, which would otherwise wait for a "ready" that never comes.
        conn.send(("failed", traceback.format_exc()))
        raise


class ViewerPool:
    """``count`` Board viewers spread over ``processes`` processes."""

    def __init__(self, targets: list[Target], processes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.pipes = []
        self.processes = []
        for n in range(processes):
            mine = targets[n::processes]
            if not mine:
                continue
            parent, child = context.Pipe()
            process = context.Process(target=_process, args=(mine, child), daemon=True)
            process.start()
            # Only the child holds its end now: if it dies, the bench reads EOF at once.
            child.close()
            self.pipes.append(parent)
            self.processes.append(process)
        self.count = self.unavailable = 0
        try:
            for pipe in self.pipes:
                if not pipe.poll(300):
                    raise RuntimeError("a viewer process did not get ready within 300 s")
                try:
                    kind, detail = pipe.recv()
                except EOFError:
                    raise RuntimeError("a viewer process exited before it was ready") from None
                if kind != "ready":
                    raise RuntimeError(f"a viewer process failed to start:\n{detail}")
                count, unavailable = detail
                self.count += count
                self.unavailable += unavailable
        except BaseException:
            self.close()
            raise
        if self.unavailable:
            print(f"bench: {self.unavailable} first-load reads were unavailable and asked again")

    def report(self, keys: list[str], cards: list[str] | None = None) -> dict[str, Any]:
        for pipe in self.pipes:
            pipe.send(("report", {"keys": keys, "cards": cards or []}))
        merged: dict[str, Any] = {
            "seen": [],
            "appeared": [],
            "requests": [],
            "keys_read": [],
            "loads": [],
            "cpu": 0.0,
        }
        for pipe in self.pipes:
            _, part = pipe.recv()
            for name in ("seen", "appeared", "requests", "keys_read", "loads"):
                merged[name] += part[name]
            merged["cpu"] += part["cpu"]
        return merged

    def close(self) -> None:
        for pipe in self.pipes:
            try:
                pipe.send(("stop", None))
                if pipe.poll(30):
                    pipe.recv()
            except (BrokenPipeError, EOFError):
                pass
        for process in self.processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
