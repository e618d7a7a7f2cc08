"""Driving a board page and its sandboxed plugin from a browser test.

``open_board`` opens ``/boards/{projectId}/`` in a context and waits for the top bar to say
"Live". ``Board.plugin`` is the probe plugin in its iframe, driven through
``window.steamHarnessKanban`` with ``frame.evaluate`` (Playwright evaluates through the
DevTools protocol, so the plugin's CSP does not stand in its way); ``Board.sent`` is every
frame the host page sent on its websockets, so a test can tell what reached the server.

The plugin packages are folders under ``plugins/``: ``probe`` (SDK only), ``raw`` (its own
handshake, no SDK) and ``inventory`` (a related project without a plugin).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from uuid import UUID

from playwright.sync_api import BrowserContext, Frame, Locator, Page, WebSocket, expect

PLUGINS: Final = Path(__file__).resolve().parent / "plugins"
PROBE_ID: Final = UUID("6ceba05c-5a3e-4377-9635-3d47bd87d6f2")
INVENTORY_ID: Final = UUID("a2082fd4-7d4d-43ed-98ed-e08462e01f1b")
RAW_ID: Final = UUID("f7ac32eb-5e98-4c55-af77-32e810830012")

#: How long in-page waits give an event to arrive, in milliseconds.
EVENT_TIMEOUT_MS: Final = 8_000


class Refused(Exception):
    """A bridge call the SDK rejected, with the error's ``code``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


#: What ``Plugin.get`` returns for a key that holds nothing (a stored ``null`` is ``None``).
ABSENT: Final = _Absent()

_CALL: Final = """async ([alias, op, key, value]) => {
  const kanban = window.steamHarnessKanban;
  const kv = alias === null ? kanban.kv : kanban.relatedProjects.get(alias).kv;
  try {
    if (op === "get") {
      const found = await kv.getValue(key);
      return {ok: true, found: found !== undefined, value: found === undefined ? null : found};
    }
    if (op === "set") return {ok: true, value: await kv.setValue(key, value)};
    // updateValue's updater must be a function; the test passes the increment.
    if (op === "add") return {ok: true, value: await kv.updateValue(key, (n) => (n ?? 0) + value)};
    throw new Error("unknown op " + op);
  } catch (error) {
    return {ok: false, code: String(error.code), message: String(error.message)};
  }
}"""

_SUBSCRIBE: Final = """async (alias) => {
  const kanban = window.steamHarnessKanban;
  const kv = alias === null ? kanban.kv : kanban.relatedProjects.get(alias).kv;
  kv.subscribe((event) => probe.note("revision", {alias: event.alias, revision: event.revision}));
  // The host relays in order over one websocket and the server handles a socket's frames
  // one at a time, so once this read is answered the subscription is in place.
  await kanban.kv.getValue("probe:barrier");
}"""

_WAIT: Final = """([kind, anyAlias, alias, count, timeout]) => new Promise((resolve, reject) => {
  const deadline = Date.now() + timeout;
  const check = () => {
    const found = probe.seen.filter((e) => e.kind === kind && (anyAlias || e.alias === alias));
    if (found.length >= count) return resolve(found);
    if (Date.now() > deadline) {
      return reject(new Error("waited for " + count + " " + kind + " events, saw " +
        JSON.stringify(probe.seen)));
    }
    setTimeout(check, 20);
  };
  check();
})"""

_ANY: Final = object()


class Plugin:
    """The probe plugin of one board page, as its own code would call the SDK."""

    def __init__(self, frame: Frame) -> None:
        self.frame = frame

    def wait_until_ready(self) -> None:
        self.frame.evaluate("() => steamHarnessKanban.ready.then(() => true)")

    def _call(self, op: str, key: str, value: Any, alias: str | None) -> Any:
        outcome = self.frame.evaluate(_CALL, [alias, op, key, value])
        if not outcome["ok"]:
            raise Refused(outcome["code"], outcome["message"])
        if op == "get" and not outcome["found"]:
            return ABSENT
        return outcome["value"]

    def get(self, key: str, *, alias: str | None = None) -> Any:
        return self._call("get", key, None, alias)

    def set(self, key: str, value: Any, *, alias: str | None = None) -> None:
        self._call("set", key, value, alias)

    def add(self, key: str, amount: int, *, alias: str | None = None) -> int:
        """``updateValue(key, n => (n ?? 0) + amount)``; returns what it stored."""
        return int(self._call("add", key, amount, alias))

    def subscribe(self, *, alias: str | None = None) -> None:
        """Subscribe; every event is noted as ``{"kind": "revision", alias, revision}``."""
        self.frame.evaluate(_SUBSCRIBE, alias)

    def seen(self, kind: str, *, alias: Any = _ANY) -> list[dict[str, Any]]:
        """What the plugin noted so far, of one kind (and one alias, when given)."""
        found: list[dict[str, Any]] = self.frame.evaluate("() => probe.seen")
        return [e for e in found if e["kind"] == kind and (alias is _ANY or e["alias"] == alias)]

    def wait_for(self, kind: str, *, alias: Any = _ANY, count: int = 1) -> list[dict[str, Any]]:
        """Block until the plugin noted ``count`` events of this kind; return them all."""
        args = [kind, alias is _ANY, None if alias is _ANY else alias, count, EVENT_TIMEOUT_MS]
        found: list[dict[str, Any]] = self.frame.evaluate(_WAIT, args)
        return found


@dataclass
class Board:
    """One open board page: its top bar, its plugin iframe, and what its host sent over
    the bridge socket."""

    page: Page
    sockets: list[WebSocket] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)

    def _watch(self, socket: WebSocket) -> None:
        if "/ws/boards/" not in socket.url:
            return  # the top bar's inbox socket (kanban/static/kanban/inbox.js)
        self.sockets.append(socket)
        socket.on("framesent", lambda payload: self.sent.append(json.loads(payload)))

    @property
    def status(self) -> Locator:
        return self.page.locator("#bridge-status")

    @property
    def frame(self) -> Frame:
        frame = self.page.locator("#plugin-frame").element_handle().content_frame()
        assert frame is not None, "the board has no plugin frame"
        return frame

    @property
    def plugin(self) -> Plugin:
        return Plugin(self.frame)

    def reload_plugin(self) -> Plugin:
        """Load the plugin's page into its iframe again, as the plugin reloading itself
        would, and wait for the new document's SDK to be ready."""
        old = self.frame
        old.evaluate("() => { window.previousDocument = true; }")
        with self.page.expect_event("framenavigated", lambda f: f == old):
            self.page.evaluate(
                "() => { const f = document.getElementById('plugin-frame'); f.src = f.src; }"
            )
        old.wait_for_load_state("load")
        plugin = self.plugin
        assert plugin.frame.evaluate("() => window.previousDocument") is None
        plugin.wait_until_ready()
        return plugin


def open_board(context: BrowserContext, project_id: UUID) -> Board:
    """Open the board in a new page and wait until the bridge is live and the plugin's
    SDK has its configuration."""
    page = context.new_page()
    board = Board(page)
    page.on("websocket", board._watch)
    page.goto(f"/boards/{project_id}/")
    expect(board.status).to_have_text("Live")
    return board
