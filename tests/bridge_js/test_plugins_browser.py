"""The built-in Board and Inventory plugins in a real Chromium, against a stand-in server.

The plugin pages are served from their package folders with the plugin CSP, inside
``<iframe sandbox="allow-scripts">`` on a host page running the real relay (``host.js``).
The websocket server speaks the bridge protocol over a small model of the product:
projects from the two ``package.json`` files, relationships confirmed only when both
sides declare each other, prefix grants, and a guest role that may read but not write.
It stands in for the Django consumer so the plugins can be checked on their own; the
real server's browser tests exercise the same pages through Django.

Run: ``.venv/bin/python -m pytest tests/bridge_js/test_plugins_browser.py -q``
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from websockets.sync.server import Server, ServerConnection, serve

pytestmark = pytest.mark.browser

BRIDGE = Path(__file__).resolve().parents[2] / "bridge_js"
DIST = BRIDGE / "dist"
#: What /static/bridge/ serves, as Django's STATICFILES_DIRS do: the built SDK and relay, and
#: the plugin kit as written.
STATIC = (DIST, BRIDGE / "static" / "bridge")
PLUGINS = BRIDGE / "plugins"
SCREENSHOTS = BRIDGE.parent / "var" / "screenshots"


def _package(folder: str) -> dict[str, Any]:
    info: dict[str, Any] = json.loads((PLUGINS / folder / "package.json").read_text())
    return info


BOARD_INFO = _package("board")["steamHarness"]["projectInfo"]
INVENTORY_INFO = _package("inventory")["steamHarness"]["projectInfo"]
BOARD = BOARD_INFO["projectId"]
INVENTORY = INVENTORY_INFO["projectId"]
FOLDERS = {BOARD: PLUGINS / "board", INVENTORY: PLUGINS / "inventory"}

CONTENT_TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".json": "application/json",
}

HOST_PAGE = """<!doctype html>
<meta charset="utf-8">
<style>html, body { margin: 0; height: 100%; } iframe { display: block; border: 0;
  width: 100%; height: 100%; }</style>
<iframe id="plugin" title="plugin" sandbox="allow-scripts" src="/plugins/{project}/index.html">
</iframe>
<script src="/static/bridge/host.js"></script>
<script>
  const params = new URLSearchParams(location.search);
  window.statuses = [];
  window.board = KanbanHost.connect({
    iframe: document.getElementById("plugin"),
    projectId: "{project}",
    wsUrl: params.get("ws"),
    configuration: JSON.parse(params.get("configuration")),
    onStatus: (s) => statuses.push(s),
  });
</script>
"""


# --- the stand-in bridge server -------------------------------------------------------------


def _allows(rule: dict[str, Any], key: str) -> bool:
    if rule.get("mode") == "all":
        return True
    if rule.get("mode") == "prefixes":
        return any(key.startswith(prefix) for prefix in rule["prefixes"])
    return False


class Refusal(Exception):
    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code = code
        self.extra = extra


@dataclass
class Connection:
    conn: ServerConnection
    project: str
    role: str
    subscriptions: set[str | None] = field(default_factory=set)
    #: alias -> prefix of each watch
    watches: dict[str | None, str] = field(default_factory=dict)


@dataclass
class BridgeModel:
    """Projects, grants, roles and KV as the plugins see them through the bridge."""

    declarations: dict[str, list[dict[str, Any]]]
    data: dict[tuple[str, str], tuple[Any, str]] = field(default_factory=dict)
    writes: list[tuple[str, str]] = field(default_factory=list)
    connections: list[Connection] = field(default_factory=list)
    delays: dict[str, float] = field(default_factory=dict)
    #: (project of the page, op) of every request the plugins sent
    requests: list[tuple[str, str]] = field(default_factory=list)
    #: (project, role, configuration id or "default") -> its values, as saved by the page
    configurations: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    seq: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock)

    def target(self, consumer: str, alias: str | None) -> tuple[str, dict[str, Any] | None]:
        """The project an alias names and the grant it gives; None means the own project."""
        if alias is None:
            return consumer, None
        mine = next((d for d in self.declarations[consumer] if d["alias"] == alias), None)
        if mine is None:
            raise Refusal("unknown_alias", f"no relationship named {alias!r}")
        other = mine["projectId"]
        back = next(
            (d for d in self.declarations.get(other, []) if d["projectId"] == consumer), None
        )
        if back is None:
            raise Refusal("relationship_pending", f"{alias!r} does not declare this project")
        return other, back["grantToRelatedProject"]

    def check(self, client: Connection, alias: str | None, key: str, *, write: bool) -> str:
        project, grant = self.target(client.project, alias)
        if grant is not None and not _allows(grant["read"], key):
            raise Refusal("forbidden", f"{alias} does not grant reading {key!r}")
        if write and grant is not None and not _allows(grant["write"], key):
            raise Refusal("forbidden", f"{alias} does not grant writing {key!r}")
        if write and client.role == "guest":
            raise Refusal("forbidden", "guests may only read")
        return project

    def get(self, project: str, key: str) -> Any:
        with self.lock:
            stored = self.data.get((project, key))
        return None if stored is None else stored[0]

    def put(self, project: str, key: str, value: Any) -> str:
        """A committed write, by a plugin or by 'someone else' in a test; then events."""
        with self.lock:
            self.seq += 1
            revision = str(self.seq)
            self.data[(project, key)] = (value, revision)
            self.writes.append((project, key))
            events: list[tuple[Connection, dict[str, Any]]] = []
            for client in self.connections:
                follows = [(alias, None) for alias in client.subscriptions]
                follows += list(client.watches.items())
                for alias, prefix in follows:
                    try:
                        target, grant = self.target(client.project, alias)
                    except Refusal:
                        continue
                    if target != project or (grant is not None and not _allows(grant["read"], key)):
                        continue
                    if prefix is None:
                        event = {"v": 1, "event": "revision", "alias": alias, "revision": revision}
                    elif key.startswith(prefix):
                        change = {"key": key, "revision": revision}
                        event = {"v": 1, "event": "changes", "alias": alias, "changes": [change]}
                    else:
                        continue
                    events.append((client, event))
        for client, event in events:
            client.conn.send(json.dumps(event))
        return revision

    def read(self, client: Connection, alias: str | None, key: str) -> dict[str, Any]:
        project = self.check(client, alias, key, write=False)
        with self.lock:
            stored = self.data.get((project, key))
        return (
            {"found": True, "value": stored[0], "revision": stored[1]}
            if stored
            else {"found": False}
        )

    def read_or_refuse(self, client: Connection, alias: str | None, key: str) -> dict[str, Any]:
        try:
            return self.read(client, alias, key)
        except Refusal as refusal:
            if refusal.code != "forbidden":
                raise
            return {"found": False, "error": {"code": refusal.code, "message": str(refusal)}}

    def answer(self, client: Connection, frame: dict[str, Any]) -> dict[str, Any]:
        op, alias, key = frame["op"], frame.get("alias"), frame.get("key", "")
        self.requests.append((client.project, op))
        try:
            result: Any
            if op == "get":
                result = self.read(client, alias, key)
            elif op == "getMany":
                self.target(client.project, alias)
                result = [self.read_or_refuse(client, alias, k) for k in frame["value"]]
            elif op == "watch":
                self.target(client.project, alias)
                client.watches[alias] = (frame.get("value") or {}).get("prefix") or ""
                result = {"watching": True}
            elif op == "unwatch":
                client.watches.pop(alias, None)
                result = {"watching": False}
            elif op == "set":
                project = self.check(client, alias, key, write=True)
                with self.lock:
                    stored = self.data.get((project, key))
                    if "expectedRevision" in frame and frame["expectedRevision"] != (
                        stored[1] if stored else None
                    ):
                        current = (
                            {"found": True, "value": stored[0], "revision": stored[1]}
                            if stored
                            else {"found": False}
                        )
                        raise Refusal("conflict", "the value changed", current=current)
                    revision = self.put(project, key, frame["value"])
                result = {"revision": revision}
            elif op == "configuration.set":
                with self.lock:
                    self.configurations[(client.project, client.role, key)] = frame["value"]
                result = {}
            elif op == "subscribe":
                self.target(client.project, alias)
                client.subscriptions.add(alias)
                result = {}
            elif op == "unsubscribe":
                client.subscriptions.discard(alias)
                result = {}
            else:
                raise Refusal("invalid_argument", f"the stand-in has no {op!r}")
        except Refusal as refusal:
            error = {"code": refusal.code, "message": str(refusal), **refusal.extra}
            return {"v": 1, "id": frame["id"], "ok": False, "error": error}
        return {"v": 1, "id": frame["id"], "ok": True, "result": result}

    def context(self, client: Connection) -> dict[str, Any]:
        """What the server's socket opens with (kanban/access/context.py), in this model."""
        related = {}
        for declaration in self.declarations[client.project]:
            try:
                _, grant = self.target(client.project, declaration["alias"])
            except Refusal:
                related[declaration["alias"]] = {"status": "pending", "can": {}}
                continue
            assert grant is not None
            can = {
                "read": grant["read"]["mode"] != "none",
                "write": grant["write"]["mode"] != "none" and client.role != "guest",
            }
            related[declaration["alias"]] = {"status": "confirmed", "can": can}
        return {
            "user": {"id": 1, "username": client.role, "displayName": client.role.title()},
            "role": client.role,
            "can": {"read": True, "write": client.role != "guest"},
            "related": related,
        }

    def handle(self, conn: ServerConnection) -> None:
        assert conn.request is not None
        url = urlsplit(conn.request.path)
        project = url.path.strip("/").split("/")[-1]
        role = parse_qs(url.query).get("role", ["developer"])[0]
        client = Connection(conn, project, role)
        with self.lock:
            self.connections.append(client)
        conn.send(json.dumps({"v": 1, "event": "context", "context": self.context(client)}))
        try:
            for message in conn:
                frame = json.loads(message)
                reply = json.dumps(self.answer(client, frame))
                delay = self.delays.get(frame.get("key", ""), 0.0)
                if delay:
                    threading.Timer(delay, conn.send, (reply,)).start()
                else:
                    conn.send(reply)
        finally:
            with self.lock:
                self.connections.remove(client)


def _plugin_csp(origin: str, project: str) -> str:
    """As kanban/web/security.py builds it for plugin pages."""
    own = f"{origin}/plugins/{project}/"
    sdk = f"{origin}/static/bridge"
    return "; ".join(
        [
            "sandbox allow-scripts",
            "default-src 'none'",
            f"script-src {own} {sdk}/kanban.js {sdk}/plugin-kit.js",
            f"style-src {own} 'unsafe-inline'",
            f"img-src {own} data: blob:",
            f"font-src {own}",
            "connect-src 'none'",
            "form-action 'none'",
            "base-uri 'none'",
            "frame-ancestors 'self'",
        ]
    )


class Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        origin = f"http://{self.headers['Host']}"
        headers: dict[str, str] = {}
        parts = path.strip("/").split("/")
        served = [folder / parts[-1] for folder in STATIC if (folder / parts[-1]).is_file()]
        if path.startswith("/static/bridge/") and served:
            body, kind = served[0].read_bytes(), "text/javascript"
            # As WhiteNoise serves static files: the sandboxed page imports the kit with CORS.
            headers["Access-Control-Allow-Origin"] = "*"
        elif path.startswith("/host/") and parts[-1] in FOLDERS:
            body, kind = HOST_PAGE.replace("{project}", parts[-1]).encode(), "text/html"
        elif len(parts) == 3 and parts[0] == "plugins" and parts[1] in FOLDERS:
            file = FOLDERS[parts[1]] / parts[2]
            if not file.is_file() or file.suffix not in CONTENT_TYPES:
                self.send_error(404)
                return
            body, kind = file.read_bytes(), CONTENT_TYPES[file.suffix]
            headers["Content-Security-Policy"] = _plugin_csp(origin, parts[1])
            # As kanban/web/views.py serves plugin files: `crossorigin` scripts need it.
            headers["Access-Control-Allow-Origin"] = "*"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", "no-store")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


# --- fixtures -------------------------------------------------------------------------------


@dataclass
class Plugin:
    """One host page with one plugin in its sandboxed iframe."""

    page: Any
    errors: list[str]

    @property
    def frame(self) -> Any:
        return self.page.frame_locator("#plugin")

    @property
    def window(self) -> Any:
        return self.page.frame(url=re.compile(r"/plugins/.+/index\.html$"))

    def by_test_id(self, test_id: str) -> Any:
        return self.frame.get_by_test_id(test_id)

    def evaluate(self, script: str) -> Any:
        return self.window.evaluate(script)

    def wait_for(self, script: str, timeout: float = 5.0) -> None:
        """Polls from here: wait_for_function would eval in the page, which its CSP forbids."""
        wait_until(lambda: self.evaluate(script), timeout)

    def board_state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.evaluate("boardDebug.state")
        return state

    def wait_settled(self) -> None:
        """No write in flight and the last refresh rendered."""
        self.wait_for("window.boardDebug ? boardDebug.state.pending === 0 : true")
        time.sleep(0.3)


@dataclass
class Stand:
    model: BridgeModel
    open: Callable[..., Plugin]


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    executable = os.environ.get("KANBAN_CHROMIUM", "/usr/bin/chromium")
    if not shutil.which(executable):
        if os.environ.get("KANBAN_REQUIRE_BROWSER") == "1":
            pytest.fail(f"no Chromium at {executable}")
        pytest.skip(f"no Chromium at {executable} (set KANBAN_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield browser
        browser.close()


def _declarations(inventory_declares_board: bool) -> dict[str, list[dict[str, Any]]]:
    return {
        BOARD: BOARD_INFO["relatedProjects"],
        INVENTORY: INVENTORY_INFO["relatedProjects"] if inventory_declares_board else [],
    }


@pytest.fixture
def inventory_declares_board() -> bool:
    """Whether the relationship is confirmed; a test parametrizes False for a pending one."""
    return True


@pytest.fixture
def stand(chromium: Any, inventory_declares_board: bool) -> Iterator[Stand]:
    model = BridgeModel(_declarations(inventory_declares_board))
    http = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    ws: Server = serve(model.handle, "127.0.0.1", 0)
    threads = [
        threading.Thread(target=http.serve_forever, daemon=True),
        threading.Thread(target=ws.serve_forever, daemon=True),
    ]
    for thread in threads:
        thread.start()
    http_url = f"http://127.0.0.1:{http.server_address[1]}"
    ws_port = ws.socket.getsockname()[1]
    contexts: list[Any] = []

    def open_plugin(
        project: str = BOARD,
        *,
        role: str = "developer",
        configuration: dict[str, Any] | None = None,
        viewport: dict[str, int] | None = None,
    ) -> Plugin:
        context = chromium.new_context(viewport=viewport or {"width": 1280, "height": 800})
        contexts.append(context)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on(
            "console",
            lambda message: (
                errors.append(message.text)
                if message.type == "error" and "Content Security Policy" in message.text
                else None
            ),
        )
        config = configuration or {"id": "", "name": "Default", "values": {}}
        ws_url = f"ws://127.0.0.1:{ws_port}/ws/boards/{project}/?role={role}"
        page.goto(
            f"{http_url}/host/{project}?ws={quote(ws_url)}"
            f"&configuration={quote(json.dumps(config))}"
        )
        plugin = Plugin(page, errors)
        debug = "boardDebug" if project == BOARD else "inventoryDebug"
        plugin.wait_for(f"window.{debug} !== undefined")
        plugin.window.evaluate(f"{debug}.ready")
        return plugin

    yield Stand(model, open_plugin)
    for context in contexts:
        context.close()
    http.shutdown()
    http.server_close()
    ws.shutdown()


def wait_until(condition: Callable[[], Any], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met within timeout")


def seed_board(model: BridgeModel, cards: list[dict[str, Any]], wip: int = 3) -> None:
    model.put(
        BOARD,
        "board:columns",
        [
            {"id": "todo", "title": "To do", "wip": 0},
            {"id": "doing", "title": "Doing", "wip": wip},
            {"id": "done", "title": "Done", "wip": 0},
        ],
    )
    for card in cards:
        model.put(BOARD, f"card:{card['id']}", card)
    model.put(BOARD, "board:cards", [card["id"] for card in cards])


def a_card(card_id: str, column: str, rank: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": card_id,
        "title": extra.pop("title", card_id.title()),
        "description": "",
        "assignee": "",
        "labels": [],
        "due": None,
        "column": column,
        "rank": rank,
        "item": None,
        **extra,
    }


def column_titles(plugin: Plugin, column: str) -> list[str]:
    titles: list[str] = (
        plugin.by_test_id(f"column-{column}").get_by_test_id("card-title").all_inner_texts()
    )
    return titles


def add_card_through_the_dialog(plugin: Plugin, column: str, title: str) -> None:
    plugin.by_test_id(f"add-card-{column}").click()
    plugin.by_test_id("card-title-input").fill(title)
    plugin.by_test_id("card-save").click()


# --- Board ------------------------------------------------------------------------------------


def test_an_empty_board_gets_default_columns_and_a_card_moves_by_keyboard(stand: Stand) -> None:
    board = stand.open()
    assert stand.model.get(BOARD, "board:columns") == [
        {"id": "todo", "title": "To do", "wip": 0},
        {"id": "doing", "title": "Doing", "wip": 3},
        {"id": "done", "title": "Done", "wip": 0},
    ]
    for column in ("todo", "doing", "done"):
        assert board.by_test_id(f"column-{column}").is_visible()

    add_card_through_the_dialog(board, "todo", "Write the release notes")
    wait_until(lambda: len(stand.model.get(BOARD, "board:cards") or []) == 1)
    (card_id,) = stand.model.get(BOARD, "board:cards")
    assert stand.model.get(BOARD, f"card:{card_id}")["title"] == "Write the release notes"
    assert column_titles(board, "todo") == ["Write the release notes"]

    card = board.by_test_id(f"card-{card_id}")
    card.focus()
    card.press("Alt+ArrowRight")
    wait_until(lambda: stand.model.get(BOARD, f"card:{card_id}")["column"] == "doing")
    assert column_titles(board, "doing") == ["Write the release notes"]
    board.wait_for(f"document.activeElement.dataset.cardId === '{card_id}'")  # focus follows

    board.by_test_id(f"card-{card_id}").press("Alt+ArrowRight")
    wait_until(lambda: stand.model.get(BOARD, f"card:{card_id}")["column"] == "done")
    board.wait_settled()
    assert column_titles(board, "done") == ["Write the release notes"]
    assert board.errors == []


def test_keyboard_reorders_edits_archives_undoes_and_deletes_for_good(stand: Stand) -> None:
    seed_board(stand.model, [a_card("one", "todo", "c"), a_card("two", "todo", "m")])
    board = stand.open()
    assert column_titles(board, "todo") == ["One", "Two"]

    board.by_test_id("card-two").focus()
    board.by_test_id("card-two").press("Alt+ArrowUp")
    wait_until(lambda: stand.model.get(BOARD, "card:two")["rank"] < "c")
    assert column_titles(board, "todo") == ["Two", "One"]
    board.by_test_id("card-two").press("ArrowDown")
    board.wait_for("document.activeElement.dataset.cardId === 'one'")

    board.by_test_id("card-one").press("Enter")
    board.by_test_id("card-title-input").fill("One, renamed")
    board.by_test_id("card-title-input").press("Enter")
    wait_until(lambda: stand.model.get(BOARD, "card:one")["title"] == "One, renamed")

    board.by_test_id("card-one").press("Delete")
    wait_until(lambda: stand.model.get(BOARD, "card:one").get("archived") is True)
    board.wait_settled()
    assert column_titles(board, "todo") == ["Two"]
    assert stand.model.get(BOARD, "board:cards") == ["one", "two"], "archived, not deleted"

    board.by_test_id("card-two").press("Control+z")
    wait_until(lambda: stand.model.get(BOARD, "card:one").get("archived") is False)
    board.wait_settled()
    assert column_titles(board, "todo") == ["Two", "One, renamed"]

    board.by_test_id("card-one").focus()
    board.by_test_id("card-one").press("Delete")
    board.wait_settled()
    board.by_test_id("archive-open").click()
    board.by_test_id("archived-one").get_by_role("button", name="Delete for good").click()
    board.by_test_id("confirm-ok").click()
    wait_until(lambda: stand.model.get(BOARD, "card:one") == {"id": "one", "deleted": True})
    assert stand.model.get(BOARD, "board:cards") == ["two"], "the index changes first"


def test_moving_a_card_writes_only_that_cards_key(stand: Stand) -> None:
    seed_board(stand.model, [a_card("a", "todo", "c"), a_card("b", "todo", "m")])
    alice, bob = stand.open(), stand.open()
    stand.model.writes.clear()

    alice.by_test_id("card-a").focus()
    bob.by_test_id("card-b").focus()
    alice.by_test_id("card-a").press("Alt+ArrowRight")
    bob.by_test_id("card-b").press("Alt+ArrowRight")
    wait_until(
        lambda: (
            stand.model.get(BOARD, "card:a")["column"] == "doing"
            and stand.model.get(BOARD, "card:b")["column"] == "doing"
        )
    )
    assert set(stand.model.writes) == {(BOARD, "card:a"), (BOARD, "card:b")}
    for person in (alice, bob):
        person.wait_for("boardDebug.state.cards.filter((c) => c.column === 'doing').length === 2")


def test_a_card_dragged_to_another_column(stand: Stand) -> None:
    seed_board(stand.model, [a_card("a", "todo", "c"), a_card("x", "done", "i")])
    board = stand.open()
    board.by_test_id("card-a").drag_to(board.by_test_id("card-x"))
    wait_until(lambda: stand.model.get(BOARD, "card:a")["column"] == "done")
    assert stand.model.get(BOARD, "card:a")["rank"] < "i", "dropped above the card under it"
    board.wait_settled()
    assert column_titles(board, "done") == ["A", "X"]


def test_another_users_change_appears_without_reload(stand: Stand) -> None:
    seed_board(stand.model, [a_card("a", "todo", "c")])
    board = stand.open()
    renders = board.board_state()["renders"]

    stand.model.put(BOARD, "card:new", a_card("new", "doing", "i", title="Added elsewhere"))
    stand.model.put(BOARD, "board:cards", ["a", "new"])
    board.wait_for("boardDebug.state.cards.some((c) => c.id === 'new')")
    assert column_titles(board, "doing") == ["Added elsewhere"]
    assert board.board_state()["renders"] <= renders + 3, "changes during a load coalesce"


def test_a_big_board_loads_in_a_few_requests_and_a_move_elsewhere_costs_one_read(
    stand: Stand,
) -> None:
    columns = ("todo", "doing", "done")
    ranks = [f"{n:03d}".replace("0", "1") for n in range(1000)]
    seed_board(
        stand.model,
        [a_card(f"c{n}", columns[n % 3], ranks[n], title=f"Card {n}") for n in range(1000)],
    )
    board = stand.open()
    board.wait_for("boardDebug.state.cards.length === 1000")
    reads = [op for _, op in stand.model.requests if op in ("get", "getMany")]
    assert reads.count("getMany") <= 6 and reads.count("get") <= 4, reads

    before = len(stand.model.requests)
    stand.model.put(BOARD, "card:c7", a_card("c7", "done", ranks[7], title="Moved elsewhere"))
    board.wait_for("boardDebug.state.cards.some((c) => c.title === 'Moved elsewhere')")
    board.wait_settled()
    after = [op for _, op in stand.model.requests[before:]]
    assert after == ["getMany"], "one batched read of the one card that changed"


def test_the_wip_warning_shows_when_a_column_holds_too_much(stand: Stand) -> None:
    cards = [a_card(f"c{i}", "doing", f"{i + 1}") for i in range(2)] + [
        a_card("spare", "todo", "i")
    ]
    seed_board(stand.model, cards, wip=2)
    board = stand.open()
    assert board.by_test_id("wip-warning-doing").count() == 0

    board.by_test_id("card-spare").focus()
    board.by_test_id("card-spare").press("Alt+ArrowRight")
    board.by_test_id("wip-warning-doing").wait_for()
    assert "limit 2" in board.by_test_id("wip-warning-doing").inner_text()

    board.frame.get_by_role("button", name="Settings for Doing").click()
    board.by_test_id("column-wip-input").fill("5")
    board.by_test_id("column-save").click()
    wait_until(lambda: stand.model.get(BOARD, "board:columns")[1]["wip"] == 5)
    board.by_test_id("wip-warning-doing").wait_for(state="detached")


def test_a_guest_sees_a_read_only_board_and_keeps_a_view_of_her_own(stand: Stand) -> None:
    seed_board(stand.model, [a_card("a", "todo", "c", title="Alpha"), a_card("b", "todo", "m")])
    guest = stand.open(role="guest")
    # Read only from the start: the socket's context says she may not write.
    guest.by_test_id("readonly-note").wait_for()
    assert "editing needs the developer role" in guest.by_test_id("readonly-note").inner_text()
    assert guest.by_test_id("add-card-todo").count() == 0
    assert column_titles(guest, "todo") == ["Alpha", "B"]

    guest.by_test_id("filter-input").fill("alpha")
    guest.wait_for("boardDebug.state.view.filter.text === 'alpha'")
    assert column_titles(guest, "todo") == ["Alpha"]
    wait_until(
        lambda: (
            (stand.model.configurations.get((BOARD, "guest", "default")) or {})
            .get("view", {})
            .get("filter", {})
            .get("text")
            == "alpha"
        )
    )

    guest.by_test_id("card-a").focus()
    guest.by_test_id("card-a").press("Alt+ArrowRight")
    time.sleep(0.3)
    assert stand.model.get(BOARD, "card:a")["column"] == "todo"
    assert [op for _, op in stand.model.requests if op == "set"] == []


def test_a_guest_on_an_empty_board_is_told_at_once(stand: Stand) -> None:
    guest = stand.open(role="guest")
    guest.by_test_id("readonly-note").wait_for()
    assert stand.model.get(BOARD, "board:columns") is None


def test_view_settings_follow_the_named_configuration(stand: Stand) -> None:
    seed_board(stand.model, [a_card("a", "todo", "c", title="Alpha"), a_card("b", "todo", "m")])
    board = stand.open(configuration={"id": "mine", "name": "Mine", "values": {}})
    board.by_test_id("filter-input").fill("alpha")
    board.by_test_id("density-toggle").click()

    def saved() -> dict[str, Any]:
        values = stand.model.configurations.get((BOARD, "developer", "mine")) or {}
        return dict(values.get("view") or {})

    wait_until(lambda: saved().get("density") == "compact")
    wait_until(lambda: saved()["filter"]["text"] == "alpha")

    board.page.evaluate("board.setConfiguration({id: 'other', name: 'Other', values: {}})")
    board.wait_for("boardDebug.state.configuration === 'other'")
    board.wait_for("boardDebug.state.view.density === 'comfortable'")
    assert board.by_test_id("filter-input").input_value() == ""
    assert column_titles(board, "todo") == ["Alpha", "B"]

    # Switching back hands the page the values the server keeps for it.
    mine = json.dumps({"id": "mine", "name": "Mine", "values": {"view": saved()}})
    board.page.evaluate(f"board.setConfiguration({mine})")
    board.wait_for("boardDebug.state.view.filter.text === 'alpha'")
    assert board.by_test_id("filter-input").input_value() == "alpha"
    assert column_titles(board, "todo") == ["Alpha"]


def test_a_slow_answer_from_before_a_switch_never_overwrites_the_new_view(stand: Stand) -> None:
    seed_board(stand.model, [a_card("a", "todo", "c", title="Alpha")])
    board = stand.open()
    stand.model.delays["board:cards"] = 1.0
    slow = {"view": {"filter": {"text": "from slow"}, "density": "compact"}}
    fast = {"view": {"filter": {"text": "from fast"}}}

    board.page.evaluate(
        f"board.setConfiguration({{id: 'slow', name: 'Slow', values: {json.dumps(slow)}}})"
    )
    time.sleep(0.1)
    board.page.evaluate(
        f"board.setConfiguration({{id: 'fast', name: 'Fast', values: {json.dumps(fast)}}})"
    )
    board.wait_for("boardDebug.state.view.filter.text === 'from fast'")
    time.sleep(1.4)
    assert board.board_state()["view"]["filter"]["text"] == "from fast"
    assert board.board_state()["view"]["density"] == "comfortable"
    assert board.by_test_id("filter-input").input_value() == "from fast"


# --- the Board and the Inventory together ------------------------------------------------------


def seed_inventory(model: BridgeModel, count: int) -> None:
    model.put(INVENTORY, "stock:pens", {"name": "Pens", "count": count})
    model.put(INVENTORY, "items", ["pens"])


def test_use_one_takes_from_the_inventory_and_stops_at_zero(stand: Stand) -> None:
    seed_inventory(stand.model, 1)
    seed_board(stand.model, [a_card("a", "todo", "c", item="pens")])
    board = stand.open()
    inventory = stand.open(INVENTORY)
    board.wait_for("boardDebug.state.stock.pens && boardDebug.state.stock.pens.count === 1")
    assert board.by_test_id("stock-a").inner_text() == "Pens: 1 in stock"

    board.by_test_id("use-one-a").click()
    wait_until(lambda: stand.model.get(INVENTORY, "stock:pens") == {"name": "Pens", "count": 0})
    board.by_test_id("stock-a").filter(has_text="Pens: 0 in stock").wait_for()
    assert board.by_test_id("use-one-a").is_disabled()
    inventory.by_test_id("count-pens").filter(has_text="0").wait_for()

    inventory.by_test_id("inc-pens").click()
    board.by_test_id("stock-a").filter(has_text="Pens: 1 in stock").wait_for()
    assert board.by_test_id("use-one-a").is_enabled()


def test_use_one_refuses_when_the_last_one_went_meanwhile(stand: Stand) -> None:
    seed_inventory(stand.model, 1)
    seed_board(stand.model, [a_card("a", "todo", "c", item="pens")])
    board = stand.open()
    board.wait_for("boardDebug.state.stock.pens && boardDebug.state.stock.pens.count === 1")
    # Someone else takes the last one; the board still shows 1 when its updater runs.
    outcome = board.evaluate(
        """(async () => {
            const inventory = steamHarnessKanban.relatedProjects.get("inventory");
            await inventory.kv.setValue("stock:pens", {name: "Pens", count: 0});
            try {
                const { useOne } = await import("./board-changes.js");
                await inventory.kv.updateValue("stock:pens", useOne);
                return "written";
            } catch (err) { return err.name + ":" + err.reason; }
        })()"""
    )
    assert outcome == "Refused:empty"
    assert stand.model.get(INVENTORY, "stock:pens")["count"] == 0


def test_the_item_picker_links_a_card_to_an_inventory_item(stand: Stand) -> None:
    seed_inventory(stand.model, 5)
    seed_board(stand.model, [a_card("a", "todo", "c")])
    board = stand.open()
    board.by_test_id("card-a").focus()
    board.by_test_id("card-a").press("Enter")
    picker = board.by_test_id("card-item-input")
    board.frame.locator("#card-item-input:not([disabled])").wait_for()
    picker.select_option("pens")
    board.by_test_id("card-save").click()
    wait_until(lambda: stand.model.get(BOARD, "card:a").get("item") == "pens")
    board.by_test_id("stock-a").filter(has_text="Pens: 5 in stock").wait_for()


@pytest.mark.parametrize("inventory_declares_board", [False])
def test_a_pending_relationship_shows_inventory_unavailable(stand: Stand) -> None:
    seed_board(stand.model, [a_card("a", "todo", "c", item="pens")])
    board = stand.open()
    board.by_test_id("stock-a").filter(has_text="Inventory unavailable").wait_for()
    assert board.by_test_id("use-one-a").count() == 0
    assert column_titles(board, "todo") == ["A"], "the board itself still works"


# --- Inventory ---------------------------------------------------------------------------------


def test_the_inventory_adds_items_and_adjusts_counts(stand: Stand) -> None:
    inventory = stand.open(INVENTORY)
    inventory.by_test_id("item-name-input").fill("Blue pens")
    inventory.by_test_id("item-count-input").fill("3")
    inventory.by_test_id("add-item").click()
    wait_until(lambda: len(stand.model.get(INVENTORY, "items") or []) == 1)
    (item,) = stand.model.get(INVENTORY, "items")
    assert item.startswith("blue-pens-")
    assert stand.model.get(INVENTORY, f"stock:{item}") == {"name": "Blue pens", "count": 3}

    inventory.by_test_id(f"inc-{item}").click()
    wait_until(lambda: stand.model.get(INVENTORY, f"stock:{item}")["count"] == 4)
    for _ in range(4):
        inventory.by_test_id(f"dec-{item}").click()
        time.sleep(0.05)
    wait_until(lambda: stand.model.get(INVENTORY, f"stock:{item}")["count"] == 0)
    assert inventory.by_test_id(f"dec-{item}").is_disabled()

    stand.model.put(INVENTORY, f"stock:{item}", {"name": "Blue pens", "count": 12})
    inventory.by_test_id(f"count-{item}").filter(has_text="12").wait_for()


def test_a_guest_cannot_change_the_inventory(stand: Stand) -> None:
    seed_inventory(stand.model, 2)
    guest = stand.open(INVENTORY, role="guest")
    guest.by_test_id("readonly-note").wait_for()
    guest.by_test_id("count-pens").filter(has_text="2").wait_for()
    assert guest.by_test_id("inc-pens").count() == 0, "no controls that could only fail"
    refused = guest.evaluate(
        "steamHarnessKanban.kv.setValue('stock:pens', {name: 'Pens', count: 9})"
        ".then(() => 'written', (err) => err.code)"
    )
    assert refused == "forbidden"
    assert stand.model.get(INVENTORY, "stock:pens")["count"] == 2


# --- looks -------------------------------------------------------------------------------------


def showcase(model: BridgeModel) -> None:
    model.put(INVENTORY, "stock:pens", {"name": "Pens", "count": 7})
    model.put(INVENTORY, "stock:paper", {"name": "Printer paper", "count": 0})
    model.put(INVENTORY, "items", ["pens", "paper"])
    seed_board(
        model,
        [
            a_card(
                "c1",
                "todo",
                "c",
                title="Draft the onboarding guide",
                description="Cover accounts, boards and the first plugin.",
                labels=["docs", "onboarding"],
                assignee="Alice Martin",
                due="2031-05-01",
            ),
            a_card("c2", "todo", "i", title="Order supplies", item="pens", labels=["office"]),
            a_card(
                "c3",
                "doing",
                "c",
                title="Fix the login redirect",
                labels=["bug"],
                assignee="Bob",
                due="2020-01-01",
            ),
            a_card("c4", "doing", "i", title="Review grants UI", assignee="Charlie"),
            a_card("c5", "doing", "p", title="Print the handbook", item="paper"),
            a_card("c6", "done", "i", title="Set up the inventory", labels=["office"]),
        ],
        wip=2,
    )


def test_the_board_reads_well_wide_and_narrow(stand: Stand) -> None:
    showcase(stand.model)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    wide = stand.open()
    wide.by_test_id("stock-c2").filter(has_text="Pens: 7 in stock").wait_for()
    assert "due-overdue" in (wide.by_test_id("due-c3").get_attribute("class") or "")
    assert "due-later" in (wide.by_test_id("due-c1").get_attribute("class") or "")
    wide.by_test_id("wip-warning-doing").wait_for()
    boxes = [wide.by_test_id(f"column-{c}").bounding_box() for c in ("todo", "doing", "done")]
    assert boxes[0]["y"] == boxes[1]["y"] == boxes[2]["y"], "columns side by side"
    assert boxes[2]["x"] + boxes[2]["width"] <= 1280
    wide.page.screenshot(path=str(SCREENSHOTS / "plugins-board-1280x800.png"))

    wide.by_test_id("card-c1").focus()
    wide.page.screenshot(path=str(SCREENSHOTS / "plugins-board-focus.png"))
    wide.by_test_id("density-toggle").click()
    wide.page.screenshot(path=str(SCREENSHOTS / "plugins-board-compact.png"))

    wide.by_test_id("card-c1").press("Enter")
    wide.by_test_id("card-title-input").wait_for()
    wide.page.screenshot(path=str(SCREENSHOTS / "plugins-board-dialog.png"))
    wide.by_test_id("card-title-input").press("Escape")

    narrow = stand.open(viewport={"width": 420, "height": 800})
    narrow.by_test_id("card-c1").wait_for()
    tops = [narrow.by_test_id(f"column-{c}").bounding_box() for c in ("todo", "doing")]
    assert tops[1]["y"] > tops[0]["y"], "columns stack on a narrow window"
    assert tops[0]["width"] <= 420
    narrow.page.screenshot(path=str(SCREENSHOTS / "plugins-board-420.png"), full_page=True)

    inventory = stand.open(INVENTORY)
    inventory.by_test_id("count-pens").wait_for()
    inventory.page.screenshot(path=str(SCREENSHOTS / "plugins-inventory-1280x800.png"))
    assert wide.errors == narrow.errors == inventory.errors == []
