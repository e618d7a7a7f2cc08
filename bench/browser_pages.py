"""The Chromium side of U7-U9 (bench/browser_bench.py): a Board project of its own for each
size, its viewers (bob, carol, dave) each in a browser context of their own, and what runs in
their plugin frames: long-task recording, watchers of a change in the DOM, a timed filter.

Every board is a copy of the Board plugin, imported as a project of its own (a fresh id),
from the working tree, or from the git ref ``KANBAN_BENCH_BOARD_REF`` names (e.g. ``HEAD``,
to measure the committed Board while its files are being edited).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import env
from bench.env import Scene, Server
from bench.sdk_bench import CHROMIUM

PEOPLE = ("bob", "carol", "dave")
#: How long a Board may take to open.
OPEN_TIMEOUT_MS = 300_000
PLUGIN = env.ROOT / "bridge_js" / "plugins" / "board"

# In the plugin frame: the long tasks since it loaded, and watchers that note when the
# board's DOM first matches what a change should make of it.
INSTALL_JS = """() => {
  if (window.__u7) return true;
  const u7 = (window.__u7 = { seen: {}, painted: {}, long: [] });
  if (typeof PerformanceObserver === "function" &&
      (PerformanceObserver.supportedEntryTypes || []).includes("longtask")) {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        u7.long.push({ start: performance.timeOrigin + e.startTime, duration: e.duration });
      }
    }).observe({ type: "longtask", buffered: true });
  }
  return true;
}"""

# Whether the page can tell the bench itself (Viewer.reported) rather than be asked.
BINDING_JS = '() => typeof window.__u7report === "function"'

WATCH_JS = """(spec) => {
  const u7 = window.__u7;
  const board = document.getElementById("board");
  const matches = () => {
    const node = board.querySelector(spec.selector);
    if (spec.absent) return !node;
    return Boolean(node) && (spec.text === null || node.textContent === spec.text);
  };
  if (matches()) { u7.seen[spec.tag] = -1; return false; }
  const observer = new MutationObserver(() => {
    if (!matches()) return;
    const seen = (u7.seen[spec.tag] = Date.now());
    observer.disconnect();
    if (window.__u7report) window.__u7report(spec.tag, "seen", seen);
    requestAnimationFrame(() => {
      const painted = (u7.painted[spec.tag] = Date.now());
      if (window.__u7report) window.__u7report(spec.tag, "painted", painted);
    });
  });
  const all = { subtree: true, childList: true, attributes: true, characterData: true };
  observer.observe(board, all);
  return true;
}"""

FILTER_JS = """async (text) => {
  const input = document.getElementById("filter-text");
  const board = document.getElementById("board");
  let last = 0;
  const observer = new MutationObserver(() => { last = performance.now(); });
  const all = { subtree: true, childList: true, attributes: true, characterData: true };
  observer.observe(board, all);
  const started = performance.now();
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
  await new Promise((done) => {
    const quiet = () =>
      performance.now() - Math.max(last, started) > 300 ? done() : setTimeout(quiet, 50);
    setTimeout(quiet, 50);
  });
  observer.disconnect();
  return { ms: Math.max(last, started) - started, changed: last > 0,
           shown: board.querySelectorAll("[data-card-id]").length };
}"""

PAINTED_JS = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


def chromium_missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is missing: U7-U9 need Debian's chromium (apt-get install chromium)"
    return None


# --- the boards ----------------------------------------------------------------------------


@contextmanager
def _plugin_copy(name: str) -> Iterator[Path]:
    """The Board's package under a fresh project id: from ``KANBAN_BENCH_BOARD_REF``'s tree
    when set, else the working tree."""
    with tempfile.TemporaryDirectory(prefix="u7-board-") as tmp:
        folder = Path(tmp) / "board"
        ref = os.environ.get("KANBAN_BENCH_BOARD_REF")
        if ref:
            relative = PLUGIN.relative_to(env.ROOT).as_posix()
            archive = subprocess.run(
                ["git", "archive", "--format=tar", ref, relative],
                cwd=env.ROOT,
                check=True,
                capture_output=True,
            ).stdout
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(tmp, filter="data")
            shutil.move(Path(tmp) / relative, folder)
        else:
            shutil.copytree(PLUGIN, folder, ignore=shutil.ignore_patterns("node_modules"))
        manifest = json.loads((folder / "package.json").read_text())
        info = manifest["steamHarness"]["projectInfo"]
        info["projectId"], info["name"] = str(uuid.uuid4()), name
        (folder / "package.json").write_text(json.dumps(manifest, indent=2))
        yield folder


@dataclass(frozen=True)
class Person:
    name: str
    cookie: str


@dataclass(frozen=True)
class BrowserBoard:
    """A Board project of ``cards`` cards: alice (``scene``) owns it and writes, the
    ``viewers`` watch it in Chromium."""

    scene: Scene
    cards: int
    viewers: tuple[Person, ...]


def seed(scene: Scene, cards: int) -> BrowserBoard:
    """A Board of its own with ``cards`` cards in one bulk commit (kanban.data.demo's
    board_fill, as U1 seeds), and bob, carol and dave as its developers."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    from kanban.access.memberships import membership_set
    from kanban.data.demo import board_fill
    from kanban.projects.packages import project_import

    suffix = os.urandom(3).hex()
    with _plugin_copy(f"U7 board {cards} {suffix}") as folder:
        board = project_import(path=folder)
    users = get_user_model().objects
    alice = users.get(pk=scene.user_id)
    membership_set(user=alice, project=board, role="owner")
    started = time.monotonic()
    board_fill(project_id=board.id, cards=cards, user=alice)
    print(f"bench: seeded {cards} cards in {time.monotonic() - started:.1f} s", flush=True)
    viewers = []
    for name in PEOPLE:
        person = users.create_user(f"{name}-{suffix}")
        membership_set(user=person, project=board, role="developer")
        client = Client()
        client.force_login(person)
        session = client.cookies[settings.SESSION_COOKIE_NAME].value
        viewers.append(Person(person.get_username(), f"{settings.SESSION_COOKIE_NAME}={session}"))
    return BrowserBoard(
        Scene(board_id=board.id, user_id=scene.user_id, cookie=scene.cookie), cards, tuple(viewers)
    )


# --- the pages -----------------------------------------------------------------------------


class Viewer:
    """One person's Board in a browser context of their own."""

    def __init__(self, context: Any, page: Any, person: Person) -> None:
        self.context, self.page, self.person = context, page, person
        self.frame: Any = None
        self.sessions: list[Any] = []
        self.opened = 0.0  # seconds its first load took
        #: tag -> {"seen": epoch ms, "painted": epoch ms}, as the page reported them
        self.reported: dict[str, dict[str, float]] = {}
        self.binding = False

    def _report(self, source: Any, tag: str, what: str, at: float) -> None:
        self.reported.setdefault(tag, {})[what] = at

    @classmethod
    async def open(cls, browser: Any, server: Server, board: BrowserBoard, n: int) -> Viewer:
        person = board.viewers[n]
        context = await browser.new_context(base_url=server.url)
        name, value = person.cookie.split("=", 1)
        await context.add_cookies([{"name": name, "value": value, "url": server.url}])
        viewer = cls(context, await context.new_page(), person)
        # The page says when it saw a change, so that no polling of it runs tasks on the
        # main thread being measured.
        await context.expose_binding("__u7report", viewer._report)
        viewer.opened = await viewer.load(board)
        return viewer

    async def load(self, board: BrowserBoard) -> float:
        """Navigation until the board is drawn and painted, in seconds."""
        started = time.perf_counter()
        await self.page.goto(f"/boards/{board.scene.board_id}/", wait_until="commit")
        drawn = self.page.frame_locator("#plugin-frame").locator(
            '#board[aria-busy="false"] [data-card-id]'
        )
        await drawn.first.wait_for(state="attached", timeout=OPEN_TIMEOUT_MS)
        self.frame = self.page.frame(url=lambda url: "/plugins/" in url)
        assert self.frame is not None
        await self.frame.evaluate(PAINTED_JS)
        took = time.perf_counter() - started
        await self.frame.evaluate(INSTALL_JS)
        self.binding = bool(await self.frame.evaluate(BINDING_JS))
        return took

    async def card_nodes(self) -> int:
        return int(
            await self.frame.evaluate("document.querySelectorAll('#board [data-card-id]').length")
        )

    async def start_metrics(self) -> None:
        """CDP sessions on the host page and, when the plugin frame has a renderer of its
        own (a sandboxed frame may), on that frame."""
        self.sessions = [await self.context.new_cdp_session(self.page)]
        # A frame in the page's own process has no target of its own: the page's counts it.
        with suppress(Exception):
            self.sessions.append(await self.context.new_cdp_session(self.frame))
        for session in self.sessions:
            await session.send("Performance.enable")

    async def heap_mb(self) -> tuple[float, float] | None:
        """The tab's used JS heap in MB, as it is and after a full collection in each of its
        renderers (what the Board keeps, not what it has not yet let go of)."""
        if not self.sessions:
            return None
        before = sum(m.get("JSHeapUsedSize", 0.0) for m in await self.metrics())
        for session in self.sessions:
            await session.send("HeapProfiler.collectGarbage")
        after = sum(m.get("JSHeapUsedSize", 0.0) for m in await self.metrics())
        return before / 2**20, after / 2**20

    async def metrics(self) -> list[dict[str, float]]:
        got = []
        for session in self.sessions:
            reply = await session.send("Performance.getMetrics")
            got.append({m["name"]: m["value"] for m in reply["metrics"]})
        return got

    async def watch(self, tag: str, spec: dict[str, Any]) -> None:
        armed = await self.frame.evaluate(WATCH_JS, {"tag": tag, **spec})
        if not armed:
            raise RuntimeError(f"{self.person.name}'s board already showed change {tag}")

    async def seen(self, tag: str) -> tuple[float | None, float | None]:
        if self.binding:
            told = self.reported.get(tag, {})
            return told.get("seen"), told.get("painted")
        got = await self.frame.evaluate(
            "(tag) => [window.__u7.seen[tag] ?? null, window.__u7.painted[tag] ?? null]", tag
        )
        return got[0], got[1]

    async def idle_ms_per_s(self, seconds: float = 1.0) -> float | None:
        """The main thread's busy time while nothing changes (the floor under U8's)."""
        before = await self.metrics()
        await asyncio.sleep(seconds)
        after = await self.metrics()
        if not before:
            return None
        busy = sum(
            a["TaskDuration"] - b["TaskDuration"] for a, b in zip(after, before, strict=True)
        )
        return 1000 * busy / seconds

    async def long_tasks(self, since: float, until: float) -> list[float]:
        tasks = await self.frame.evaluate("window.__u7.long")
        return [t["duration"] for t in tasks if since <= t["start"] <= until]
