"""The built bridge in a real Chromium: a sandboxed plugin iframe, the host relay and a
websocket server that speaks the bridge protocol with a tiny in-memory KV.

The server here is a stand-in for the Django consumer so the JS can be checked on its
own; the full path through Django is tested with the consumer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.server import Server, ServerConnection, serve

from tests.bridge_js.pages import QuietPages

pytestmark = pytest.mark.browser

DIST = Path(__file__).resolve().parents[2] / "bridge_js" / "dist"

HOST_PAGE = """<!doctype html>
<iframe id="plugin" sandbox="allow-scripts" src="/{plugin}"></iframe>
<script src="/static/bridge/host.js"></script>
<script>
  const params = new URLSearchParams(location.search);
  window.statuses = [];
  window.board = KanbanHost.connect({
    iframe: document.getElementById("plugin"),
    projectId: "p1",
    wsUrl: params.get("ws"),
    configuration: {id: "c1", name: "Mine", values: {wip: 2}},
    onStatus: (s) => statuses.push(s),
  });
</script>
"""

PLUGIN_PAGE = """<!doctype html>
<script src="/static/bridge/kanban.js"></script>
<script>
  window.events = [];
  window.invalidations = [];
  steamHarnessKanban.ready.then(() => (window.isReady = true));
  steamHarnessKanban.onInvalidated((e) => invalidations.push(e));
</script>
"""

# A plugin that skips the SDK and sends frames the host must refuse.
ROGUE_PAGE = """<!doctype html>
<script>
  window.replies = [];
  const hello = () => parent.postMessage({type: "steamHarnessKanban:hello", v: 1}, "*");
  const timer = setInterval(hello, 200);
  hello();
  addEventListener("message", (e) => {
    clearInterval(timer);
    const port = e.ports[0];
    port.onmessage = (m) => replies.push(m.data);
    port.postMessage({v: 1, type: "ready", nonce: e.data.nonce});
    port.postMessage({v: 1, id: 1, op: "get", key: "k", projectId: "someone-else"});
    port.postMessage(JSON.parse('{"v":1,"id":2,"op":"get","key":"k","__proto__":{"a":1}}'));
    port.postMessage({v: 1, id: 3, op: "get", key: "k", scope: "conversation"});
    port.postMessage({v: 1, id: 4, op: "get", key: "k"});
  }, {once: true});
</script>
"""


@dataclass
class BridgeServer:
    """Speaks the wire protocol: get/set with revisions, subscribe with revision events."""

    received: list[dict[str, Any]] = field(default_factory=list)
    connections: list[ServerConnection] = field(default_factory=list)
    subscriptions: dict[ServerConnection, set[str | None]] = field(default_factory=dict)
    data: dict[tuple[str | None, str], tuple[Any, str]] = field(default_factory=dict)
    seq: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, conn: ServerConnection) -> None:
        with self.lock:
            self.connections.append(conn)
            self.subscriptions[conn] = set()
        for message in conn:
            frame = json.loads(message)
            reply = self.answer(conn, frame)
            with self.lock:
                self.received.append(frame)
            conn.send(json.dumps(reply))

    def answer(self, conn: ServerConnection, frame: dict[str, Any]) -> dict[str, Any]:
        alias, op = frame.get("alias"), frame["op"]
        reply = {"v": 1, "id": frame["id"], "ok": True, "result": {}}
        if op == "get":
            stored = self.data.get((alias, frame["key"]))
            reply["result"] = (
                {"found": True, "value": stored[0], "revision": stored[1]}
                if stored
                else {"found": False}
            )
        elif op == "set":
            reply["result"] = {"revision": self.write(alias, frame["key"], frame["value"])}
        elif op == "subscribe":
            self.subscriptions[conn].add(alias)
        elif op == "unsubscribe":
            self.subscriptions[conn].discard(alias)
        return reply

    def write(self, alias: str | None, key: str, value: Any) -> str:
        with self.lock:
            self.seq += 1
            revision = str(self.seq)
            self.data[(alias, key)] = (value, revision)
            listeners = [c for c, aliases in self.subscriptions.items() if alias in aliases]
        event = {"v": 1, "event": "revision", "alias": alias, "revision": revision}
        for conn in listeners:
            conn.send(json.dumps(event))
        return revision

    def ops(self) -> list[str]:
        with self.lock:
            return [f["op"] for f in self.received]


class Pages(QuietPages):
    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        headers: dict[str, str] = {}
        if path.startswith("/static/bridge/") and (DIST / path.rsplit("/", 1)[1]).is_file():
            body = (DIST / path.rsplit("/", 1)[1]).read_bytes()
            kind = "text/javascript"
        elif path.startswith("/host-"):
            body = HOST_PAGE.replace("{plugin}", path.removeprefix("/host-")).encode()
            kind = "text/html"
        elif path in ("/plugin.html", "/rogue.html"):
            body = (PLUGIN_PAGE if path == "/plugin.html" else ROGUE_PAGE).encode()
            kind = "text/html"
            headers["Content-Security-Policy"] = "sandbox allow-scripts"
        else:
            self.send_error(404)
            return
        self.answer(body, kind, headers)


@dataclass
class Board:
    page: Any
    server: BridgeServer

    @property
    def plugin(self) -> Any:
        return self.page.frame(url=re.compile(r"/(plugin|rogue)\.html$"))

    def wait_ready(self) -> None:
        self.plugin.wait_for_function("window.isReady === true", timeout=5000)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    executable = os.environ.get("KANBAN_CHROMIUM", "/usr/bin/chromium")
    if not shutil.which(executable):
        pytest.skip(f"no Chromium at {executable} (set KANBAN_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def servers() -> Iterator[tuple[str, str, BridgeServer]]:
    bridge = BridgeServer()
    http = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    ws: Server = serve(bridge.handle, "127.0.0.1", 0)
    threads = [
        threading.Thread(target=http.serve_forever, daemon=True),
        threading.Thread(target=ws.serve_forever, daemon=True),
    ]
    for thread in threads:
        thread.start()
    http_url = f"http://127.0.0.1:{http.server_address[1]}"
    ws_url = f"ws://127.0.0.1:{ws.socket.getsockname()[1]}/ws/boards/p1/"
    yield http_url, ws_url, bridge
    http.shutdown()
    http.server_close()
    ws.shutdown()


@pytest.fixture
def open_board(
    chromium: Any, servers: tuple[str, str, BridgeServer]
) -> Iterator[Callable[[str], Board]]:
    http_url, ws_url, bridge = servers
    pages: list[Any] = []

    def open_page(plugin: str) -> Board:
        page = chromium.new_page()
        pages.append(page)
        page.goto(f"{http_url}/host-{plugin}?ws={ws_url}")
        return Board(page, bridge)

    yield open_page
    for page in pages:
        page.close()


def test_the_sandboxed_plugin_reads_and_writes_through_the_host(
    open_board: Callable[[str], Board],
) -> None:
    board = open_board("plugin.html")
    board.wait_ready()
    assert board.plugin.evaluate("origin") == "null"
    assert board.plugin.evaluate("steamHarnessKanban.getConfiguration()") == {
        "id": "c1",
        "name": "Mine",
        "values": {"wip": 2},
    }
    assert board.plugin.evaluate("steamHarnessKanban.kv.getValue('cards')") is None
    board.plugin.evaluate("steamHarnessKanban.kv.setValue('cards', ['a', 'b'])")
    assert board.plugin.evaluate("steamHarnessKanban.kv.getValue('cards')") == ["a", "b"]
    increment = "kv.updateValue('n', (n) => (n ?? 0) + 1)"
    assert (
        board.plugin.evaluate(f"steamHarnessKanban.relatedProjects.get('inventory').{increment}")
        == 1
    )
    assert board.server.data[("inventory", "n")][0] == 1
    assert all(
        set(f) <= {"v", "id", "op", "alias", "key", "value", "expectedRevision"}
        for f in board.server.received
    )
    assert board.page.evaluate("statuses") == ["connecting", "open"]


def test_argument_mistakes_never_leave_the_iframe(open_board: Callable[[str], Board]) -> None:
    board = open_board("plugin.html")
    board.wait_ready()
    outcome = board.plugin.evaluate(
        """Promise.allSettled([
            steamHarnessKanban.kv.setValue('k', undefined),
            steamHarnessKanban.kv.setValue('k', NaN),
            steamHarnessKanban.kv.getValue(''),
        ]).then((r) => r.map((x) => x.reason.name + ':' + x.reason.code))"""
    )
    assert outcome == ["TypeError:invalid_argument"] * 3
    assert board.server.received == []


def test_limits_are_the_hosts_and_refused_with_the_same_codes(
    open_board: Callable[[str], Board],
) -> None:
    board = open_board("plugin.html")
    board.wait_ready()
    outcome = board.plugin.evaluate(
        """Promise.allSettled([
            steamHarnessKanban.kv.setValue('k', 'x'.repeat(1048576)),
            steamHarnessKanban.kv.getValue('k'.repeat(1025)),
            steamHarnessKanban.kv.setValue('k', {a: '\\uDC00'}),
        ]).then((r) => r.map((x) => x.reason.name + ':' + x.reason.code))"""
    )
    assert outcome == [
        "BridgeError:too_large",
        "BridgeError:invalid_argument",
        "BridgeError:invalid_argument",
    ]
    assert board.server.received == []


def test_the_host_refuses_extra_fields_without_relaying_them(
    open_board: Callable[[str], Board],
) -> None:
    board = open_board("rogue.html")
    answered = "window.replies.filter((r) => 'id' in r)"
    board.plugin.wait_for_function(answered + ".length === 4", timeout=5000)
    replies = {r["id"]: r for r in board.plugin.evaluate(answered)}
    for rogue in (1, 2, 3):
        assert replies[rogue]["ok"] is False
        assert replies[rogue]["error"]["code"] == "invalid_argument"
    assert replies[4] == {"v": 1, "id": 4, "ok": True, "result": {"found": False}}
    assert board.server.received == [{"v": 1, "id": 1, "op": "get", "key": "k"}]


def test_subscriptions_follow_reloads_and_reconnects(open_board: Callable[[str], Board]) -> None:
    board = open_board("plugin.html")
    board.wait_ready()
    # Keep the unsubscribe functions in the page: evaluate would call a returned function.
    board.plugin.evaluate(
        "window.offs = [steamHarnessKanban.kv.subscribe((e) => events.push(e)), "
        "steamHarnessKanban.relatedProjects.get('stock').kv.subscribe((e) => events.push(e))]"
        ".length"
    )
    _wait(lambda: board.server.ops().count("subscribe") == 2)
    revision = board.server.write("stock", "item-1", {"count": 3})
    board.plugin.wait_for_function("events.length === 1")
    assert board.plugin.evaluate("events") == [{"alias": "stock", "revision": revision}]

    board.server.connections[0].close()
    board.plugin.wait_for_function("events.length === 3", timeout=5000)
    resync = board.plugin.evaluate("events.slice(1)")
    assert sorted(e["alias"] or "" for e in resync) == ["", "stock"]
    assert {e["revision"] for e in resync} == {"resync-1"}
    assert board.page.evaluate("statuses") == ["connecting", "open", "reconnecting", "open"]

    board.plugin.evaluate("location.reload()")
    _wait(lambda: board.plugin is not None and board.plugin.evaluate("window.isReady === true"))
    _wait(lambda: board.server.ops().count("unsubscribe") == 2)
    assert board.plugin.evaluate("steamHarnessKanban.kv.getValue('cards')") is None
    assert len(board.server.connections) == 2, "one websocket per page view, reload or not"


def _wait(condition: Any, timeout: float = 5.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except Exception:  # noqa: S110 - the frame may be mid-navigation
            pass
        time.sleep(0.05)
    raise AssertionError("condition not met within timeout")
