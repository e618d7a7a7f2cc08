"""The built-in Board and Inventory plugins in a real Chromium, on the plugin test host.

This is how a plugin's developer tests without a server (bridge_js/testing/host.mjs): the
plugin pages are served from their package folders with the plugin CSP, each in its own
``<iframe sandbox="allow-scripts">``, with the SDK they load themselves; the test page is
their host, through the real host handshake, and one in-memory world (testing/world.mjs,
built into dist/testing.mjs) answers them as the server does: the two projects from their
``package.json`` files, the relationship confirmed when both sides declare it, their
grants, roles, revisions and compare-and-set. Several frames on the page are several
people on the same board. The real server's browser tests (tests/browser) exercise the
same pages through Django.

Run: ``.venv/bin/python -m pytest tests/bridge_js/test_builtin_plugins.py -q``
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.bridge_js.pages import QuietPages

pytestmark = pytest.mark.browser

BRIDGE = Path(__file__).resolve().parents[2] / "bridge_js"
#: What the server serves under /static/bridge/: the built SDK and test host, and beside it
#: what bridge_js/static/bridge holds.
STATIC = [BRIDGE / "dist", BRIDGE / "static" / "bridge"]
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
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".json": "application/json",
}

# The test page: the host of every plugin frame the test opens, all on one world.
HOST_PAGE = b"""<!doctype html>
<meta charset="utf-8">
<style>html, body { margin: 0; } iframe { display: block; border: 0; }</style>
<script type="module">
  import { createTestWorld, connectFrame } from "/static/bridge/testing.mjs";
  window.pages = {};
  window.startWorld = (spec) => { window.world = createTestWorld(spec); };
  window.openPlugin = async (name, project, options, size) => {
    const iframe = document.createElement("iframe");
    Object.assign(iframe, { name, id: name, title: name, src: `/plugins/${project}/index.html` });
    iframe.setAttribute("sandbox", "allow-scripts");
    Object.assign(iframe.style, { width: `${size.width}px`, height: `${size.height}px` });
    const connected = connectFrame(world, iframe, { project, ...options });
    document.body.append(iframe);
    pages[name] = await connected;
  };
</script>
"""


def _rule(grant: dict[str, Any]) -> str | list[str]:
    """A package.json grant rule as the test world writes it."""
    if grant["mode"] == "prefixes":
        return list(grant["prefixes"])
    return str(grant["mode"])


def relationships(inventory_declares_board: bool) -> list[dict[str, Any]]:
    """Each side's aliases onto the other, with the rules the other side grants; pending
    until both sides declare each other, as seed 000 says."""
    declared = {BOARD: BOARD_INFO["relatedProjects"], INVENTORY: INVENTORY_INFO["relatedProjects"]}
    if not inventory_declares_board:
        declared[INVENTORY] = []
    links = []
    for project, declarations in declared.items():
        for mine in declarations:
            other = mine["projectId"]
            back = next((d for d in declared[other] if d["projectId"] == project), None)
            link = {"from": project, "alias": mine["alias"], "to": other}
            if back is None:
                link["pending"] = True
            else:
                grant = back["grantToRelatedProject"]
                link |= {"read": _rule(grant["read"]), "write": _rule(grant["write"])}
            links.append(link)
    return links


def _plugin_csp(origin: str, project: str) -> str:
    """As kanban/web/security.py builds it for plugin pages."""
    own = f"{origin}/plugins/{project}/"
    sdk = f"{origin}/static/bridge"
    return "; ".join(
        [
            "sandbox allow-scripts",
            "default-src 'none'",
            f"script-src {own} {sdk}/kanban.js {sdk}/plugin-kit.js",
            f"style-src {own} {sdk}/plugin-kit.css 'unsafe-inline'",
            f"img-src {own} data: blob:",
            f"font-src {own}",
            "connect-src 'none'",
            "form-action 'none'",
            "base-uri 'none'",
            "frame-ancestors 'self'",
        ]
    )


class Pages(QuietPages):
    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        origin = f"http://{self.headers['Host']}"
        headers: dict[str, str] = {"Access-Control-Allow-Origin": "*"}
        parts = path.strip("/").split("/")
        static = [folder / parts[-1] for folder in STATIC if (folder / parts[-1]).is_file()]
        if path == "/":
            body, kind = HOST_PAGE, "text/html"
        elif path.startswith("/static/bridge/") and len(parts) == 3 and static:
            body, kind = static[0].read_bytes(), CONTENT_TYPES[static[0].suffix]
        elif len(parts) >= 3 and parts[0] == "plugins" and parts[1] in FOLDERS:
            # A plugin's subfolders too (the Board's vendor/), as the server serves them.
            file = FOLDERS[parts[1]].joinpath(*parts[2:])
            root = FOLDERS[parts[1]].resolve()
            inside = ".." not in parts and file.resolve().is_relative_to(root)
            if not inside or not file.is_file() or file.suffix not in CONTENT_TYPES:
                self.send_error(404)
                return
            body, kind = file.read_bytes(), CONTENT_TYPES[file.suffix]
            headers["Content-Security-Policy"] = _plugin_csp(origin, parts[1])
        else:
            self.send_error(404)
            return
        self.answer(body, kind, {"Cache-Control": "no-store", **headers})


# --- fixtures -------------------------------------------------------------------------------


def wait_until(condition: Callable[[], Any], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met within timeout")


@dataclass
class World:
    """The test page's world, seen from here: what it stores, what the pages asked."""

    page: Any

    def put(self, project: str, key: str, value: Any) -> str:
        """Someone else's write: every page that may read it hears it."""
        revision: str = self.page.evaluate(
            "([p, k, v]) => world.write(p, k, v)", [project, key, value]
        )
        return revision

    def put_many(self, project: str, values: dict[str, Any]) -> None:
        script = "([p, values]) => { for (const [k, v] of values) world.write(p, k, v); }"
        self.page.evaluate(script, [project, list(values.items())])

    def get(self, project: str, key: str) -> Any:
        return self.page.evaluate("([p, k]) => world.value(p, k) ?? null", [project, key])

    def requests(self) -> list[dict[str, Any]]:
        """Every request the pages sent: {project, user, op, alias, key}."""
        requests: list[dict[str, Any]] = self.page.evaluate("world.requests")
        return requests

    def ops(self, since: int = 0, *, project: str | None = None) -> list[str]:
        return [r["op"] for r in self.requests()[since:] if project in (None, r["project"])]

    def fail_next(self, op: str, *, times: int = 1, code: str = "unavailable") -> None:
        """The next ``times`` requests of ``op`` are refused with ``code``."""
        self.page.evaluate(
            "([op, times, code]) => world.failNext(op, {times, code})", [op, times, code]
        )

    def delay(self, key: str, seconds: float) -> None:
        self.page.evaluate("([k, ms]) => world.delays.set(k, ms)", [key, seconds * 1000])


@dataclass
class Plugin:
    """One plugin frame on the test page."""

    page: Any
    name: str
    page_errors: list[str] = field(default_factory=list)

    @property
    def frame(self) -> Any:
        return self.page.frame_locator(f"#{self.name}")

    @property
    def window(self) -> Any:
        return self.page.frame(name=self.name)

    @property
    def errors(self) -> list[str]:
        """What the page threw, and what the SDK reported to its host."""
        reported: list[str] = self.page.evaluate(
            "n => pages[n].errors.map((e) => e.message)", self.name
        )
        return [*self.page_errors, *reported]

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

    def configuration(self) -> dict[str, Any]:
        """The configuration the world holds for this page, with what the page saved."""
        saved: dict[str, Any] = self.page.evaluate("n => pages[n].configuration()", self.name)
        return saved

    def switch_configuration(self, configuration: dict[str, Any]) -> None:
        """As the board page's picker does."""
        self.page.evaluate(
            "([n, c]) => pages[n].switchConfiguration(c)", [self.name, configuration]
        )

    def screenshot(self, name: str) -> None:
        self.page.locator(f"#{self.name}").screenshot(path=str(SCREENSHOTS / name))


@dataclass
class Stand:
    world: World
    open: Callable[..., Plugin]


@pytest.fixture
def inventory_declares_board() -> bool:
    """Whether the relationship is confirmed; a test parametrizes False for a pending one."""
    return True


@pytest.fixture
def stand(browser: Any, inventory_declares_board: bool) -> Iterator[Stand]:
    http = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    Thread(target=http.serve_forever, daemon=True).start()
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page_errors: list[str] = []
    page.on("pageerror", lambda error: page_errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            page_errors.append(message.text)
            if message.type == "error" and "Content Security Policy" in message.text
            else None
        ),
    )
    page.goto(f"http://127.0.0.1:{http.server_address[1]}/")
    page.wait_for_function("typeof window.startWorld === 'function'")
    spec = {
        "projects": {BOARD: {}, INVENTORY: {}},
        "relationships": relationships(inventory_declares_board),
    }
    page.evaluate("spec => startWorld(spec)", spec)
    people = {
        "developer": (1, "alice", "Alice"),
        "guest": (2, "gus", "Gus"),
        "owner": (3, "olive", "Olive"),
    }
    opened: list[Plugin] = []

    def open_plugin(
        project: str = BOARD,
        *,
        role: str = "developer",
        configuration: dict[str, Any] | None = None,
        viewport: dict[str, int] | None = None,
    ) -> Plugin:
        user_id, username, display = people[role]
        options = {
            "user": {"id": user_id, "username": username, "displayName": display},
            "role": role,
            "configuration": configuration or {"id": "", "name": "Default", "values": {}},
        }
        plugin = Plugin(page, f"plugin{len(opened) + 1}", page_errors)
        size = viewport or {"width": 1280, "height": 800}
        page.evaluate(
            "([n, p, o, s]) => openPlugin(n, p, o, s)", [plugin.name, project, options, size]
        )
        opened.append(plugin)
        debug = {BOARD: "boardDebug", INVENTORY: "inventoryDebug"}.get(project)
        if debug:
            plugin.wait_for(f"window.{debug} !== undefined")
            plugin.window.evaluate(f"{debug}.ready")
        return plugin

    yield Stand(World(page), open_plugin)
    page.evaluate("world.close()")
    context.close()
    http.shutdown()
    http.server_close()


def seed_board(world: World, cards: list[dict[str, Any]], wip: int = 3) -> None:
    columns = [
        {"id": "todo", "title": "To do", "wip": 0},
        {"id": "doing", "title": "Doing", "wip": wip},
        {"id": "done", "title": "Done", "wip": 0},
    ]
    values: dict[str, Any] = {"board:columns": columns}
    values |= {f"card:{card['id']}": card for card in cards}
    values["board:cards"] = [card["id"] for card in cards]
    world.put_many(BOARD, values)


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


def add_card_in_place(plugin: Plugin, column: str, title: str) -> None:
    """ "+ Add card" opens a title field in the column; Enter adds the card."""
    plugin.by_test_id(f"add-card-{column}").click()
    plugin.by_test_id(f"quick-add-{column}").fill(title)
    plugin.by_test_id(f"quick-add-{column}").press("Enter")


# --- Board ------------------------------------------------------------------------------------


def test_an_empty_board_gets_default_columns_and_a_card_moves_by_keyboard(stand: Stand) -> None:
    board = stand.open()
    # No preset WIP limit: a new board must not greet its team with a red column.
    assert stand.world.get(BOARD, "board:columns") == [
        {"id": "todo", "title": "To do", "wip": 0},
        {"id": "doing", "title": "Doing", "wip": 0},
        {"id": "done", "title": "Done", "wip": 0},
    ]
    for column in ("todo", "doing", "done"):
        assert board.by_test_id(f"column-{column}").is_visible()

    add_card_in_place(board, "todo", "Write the release notes")
    wait_until(lambda: len(stand.world.get(BOARD, "board:cards") or []) == 1)
    (card_id,) = stand.world.get(BOARD, "board:cards")
    assert stand.world.get(BOARD, f"card:{card_id}")["title"] == "Write the release notes"
    assert column_titles(board, "todo") == ["Write the release notes"]

    card = board.by_test_id(f"card-{card_id}")
    card.focus()
    card.press("Alt+ArrowRight")
    wait_until(lambda: stand.world.get(BOARD, f"card:{card_id}")["column"] == "doing")
    assert column_titles(board, "doing") == ["Write the release notes"]
    board.wait_for(f"document.activeElement.dataset.cardId === '{card_id}'")  # focus follows

    board.by_test_id(f"card-{card_id}").press("Alt+ArrowRight")
    wait_until(lambda: stand.world.get(BOARD, f"card:{card_id}")["column"] == "done")
    board.wait_settled()
    assert column_titles(board, "done") == ["Write the release notes"]
    assert board.errors == []


def test_keyboard_reorders_edits_archives_undoes_and_deletes_for_good(stand: Stand) -> None:
    seed_board(stand.world, [a_card("one", "todo", "c"), a_card("two", "todo", "m")])
    board = stand.open()
    assert column_titles(board, "todo") == ["One", "Two"]

    board.by_test_id("card-two").focus()
    board.by_test_id("card-two").press("Alt+ArrowUp")
    wait_until(lambda: stand.world.get(BOARD, "card:two")["rank"] < "c")
    assert column_titles(board, "todo") == ["Two", "One"]
    board.by_test_id("card-two").press("ArrowDown")
    board.wait_for("document.activeElement.dataset.cardId === 'one'")

    board.by_test_id("card-one").press("Enter")
    board.by_test_id("card-title-input").fill("One, renamed")
    board.by_test_id("card-title-input").press("Enter")
    wait_until(lambda: stand.world.get(BOARD, "card:one")["title"] == "One, renamed")

    board.by_test_id("card-one").press("Delete")
    wait_until(lambda: stand.world.get(BOARD, "card:one").get("archived") is True)
    board.wait_settled()
    assert column_titles(board, "todo") == ["Two"]
    assert stand.world.get(BOARD, "board:cards") == ["one", "two"], "archived, not deleted"

    board.by_test_id("card-two").press("Control+z")
    wait_until(lambda: stand.world.get(BOARD, "card:one").get("archived") is False)
    board.wait_settled()
    assert column_titles(board, "todo") == ["Two", "One, renamed"]

    board.by_test_id("card-one").focus()
    board.by_test_id("card-one").press("Delete")
    board.wait_settled()
    board.by_test_id("archive-open").click()
    board.by_test_id("archived-one").get_by_role("button", name="Delete for good").click()
    board.by_test_id("confirm-ok").click()
    wait_until(lambda: stand.world.get(BOARD, "card:one") == {"id": "one", "deleted": True})
    assert stand.world.get(BOARD, "board:cards") == ["two"], "the index changes first"


def test_moving_a_card_writes_only_that_cards_key(stand: Stand) -> None:
    seed_board(stand.world, [a_card("a", "todo", "c"), a_card("b", "todo", "m")])
    alice, bob = stand.open(), stand.open()
    before = len(stand.world.requests())

    alice.by_test_id("card-a").focus()
    bob.by_test_id("card-b").focus()
    alice.by_test_id("card-a").press("Alt+ArrowRight")
    bob.by_test_id("card-b").press("Alt+ArrowRight")
    wait_until(
        lambda: (
            stand.world.get(BOARD, "card:a")["column"] == "doing"
            and stand.world.get(BOARD, "card:b")["column"] == "doing"
        )
    )
    writes = {(r["project"], r["key"]) for r in stand.world.requests()[before:] if r["op"] == "set"}
    assert writes == {(BOARD, "card:a"), (BOARD, "card:b")}
    for person in (alice, bob):
        person.wait_for("boardDebug.state.cards.filter((c) => c.column === 'doing').length === 2")


def test_a_card_dragged_to_another_column(stand: Stand) -> None:
    seed_board(stand.world, [a_card("a", "todo", "c"), a_card("x", "done", "i")])
    board = stand.open()
    board.by_test_id("card-a").drag_to(board.by_test_id("card-x"))
    wait_until(lambda: stand.world.get(BOARD, "card:a")["column"] == "done")
    assert stand.world.get(BOARD, "card:a")["rank"] < "i", "dropped above the card under it"
    board.wait_settled()
    assert column_titles(board, "done") == ["A", "X"]


def test_another_users_change_appears_without_reload(stand: Stand) -> None:
    seed_board(stand.world, [a_card("a", "todo", "c")])
    board = stand.open()
    renders = board.board_state()["renders"]

    stand.world.put(BOARD, "card:new", a_card("new", "doing", "i", title="Added elsewhere"))
    stand.world.put(BOARD, "board:cards", ["a", "new"])
    board.wait_for("boardDebug.state.cards.some((c) => c.id === 'new')")
    assert column_titles(board, "doing") == ["Added elsewhere"]
    assert board.board_state()["renders"] <= renders + 3, "changes during a load coalesce"


def test_a_big_board_loads_in_a_few_requests_and_a_move_elsewhere_costs_no_read(
    stand: Stand,
) -> None:
    columns = ("todo", "doing", "done")
    ranks = [f"{n:03d}".replace("0", "1") for n in range(1000)]
    seed_board(
        stand.world,
        [a_card(f"c{n}", columns[n % 3], ranks[n], title=f"Card {n}") for n in range(1000)],
    )
    board = stand.open()
    board.wait_for("boardDebug.state.cards.length === 1000")
    # The drawn cards' attachments are asked for 40 ms after the window settles: counted
    # here with the load, not after it.
    board.wait_settled()
    reads = [op for op in stand.world.ops() if op in ("get", "getMany")]
    # Six batched reads for the cards and the board's own keys, and two for the
    # attachments:<card> values around the cards drawn: each 333-card column draws a window
    # of a few dozen and asks for 64 more beyond it, so a cover on a face costs no read of
    # the other 700 cards' values.
    assert reads.count("getMany") <= 6 + 2 and reads.count("get") <= 4, [
        (r["op"], r.get("key"), len(r.get("keys") or [])) for r in stand.world.requests()
    ]
    drawn = board.evaluate("document.querySelectorAll('[data-card-id]').length")
    assert 30 <= drawn <= 300, f"{drawn} card nodes for 1,000 cards"

    before = len(stand.world.requests())
    stand.world.put(BOARD, "card:c7", a_card("c7", "done", ranks[7], title="Moved elsewhere"))
    board.wait_for("boardDebug.state.cards.some((c) => c.title === 'Moved elsewhere')")
    board.wait_settled()
    assert stand.world.ops(before) == [], "the card came with its change event"

    # A value past the size events carry comes without it: one batched read of that card.
    long = "x" * 20_000
    stand.world.put(
        BOARD, "card:c8", a_card("c8", "done", ranks[8], title="Long", description=long)
    )
    board.wait_for("boardDebug.state.cards.some((c) => c.title === 'Long')")
    board.wait_settled()
    assert stand.world.ops(before) == ["getMany"]


def test_a_board_opened_while_the_server_is_busy_asks_again_and_loads(stand: Stand) -> None:
    # A thousand Boards opening at once: the server answers some reads unavailable.
    seed_board(stand.world, [a_card("a", "todo", "c", title="Alpha")])
    stand.world.fail_next("getMany", times=2)
    board = stand.open()
    board.wait_for("boardDebug.state.cards.length === 1")
    assert column_titles(board, "todo") == ["Alpha"]
    assert stand.world.ops().count("getMany") >= 3, "two refused, then read"
    assert board.errors == []


def test_the_wip_warning_shows_when_a_column_holds_too_much(stand: Stand) -> None:
    cards = [a_card(f"c{i}", "doing", f"{i + 1}") for i in range(2)] + [
        a_card("spare", "todo", "i")
    ]
    seed_board(stand.world, cards, wip=2)
    board = stand.open()
    assert board.by_test_id("wip-warning-doing").count() == 0

    board.by_test_id("card-spare").focus()
    board.by_test_id("card-spare").press("Alt+ArrowRight")
    board.by_test_id("wip-warning-doing").wait_for()
    assert "limit 2" in board.by_test_id("wip-warning-doing").inner_text()

    board.frame.get_by_role("button", name="Settings for Doing").click()
    board.by_test_id("column-wip-input").fill("5")
    board.by_test_id("column-save").click()
    wait_until(lambda: stand.world.get(BOARD, "board:columns")[1]["wip"] == 5)
    board.by_test_id("wip-warning-doing").wait_for(state="detached")


def test_a_guest_sees_a_read_only_board_and_keeps_a_view_of_her_own(stand: Stand) -> None:
    seed_board(stand.world, [a_card("a", "todo", "c", title="Alpha"), a_card("b", "todo", "m")])
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
            guest.configuration()["values"].get("view", {}).get("filter", {}).get("text") == "alpha"
        )
    )

    guest.by_test_id("card-a").focus()
    guest.by_test_id("card-a").press("Alt+ArrowRight")
    time.sleep(0.3)
    assert stand.world.get(BOARD, "card:a")["column"] == "todo"
    assert "set" not in stand.world.ops()


def test_a_guest_on_an_empty_board_is_told_at_once(stand: Stand) -> None:
    guest = stand.open(role="guest")
    guest.by_test_id("readonly-note").wait_for()
    assert stand.world.get(BOARD, "board:columns") is None


def test_view_settings_follow_the_named_configuration(stand: Stand) -> None:
    seed_board(stand.world, [a_card("a", "todo", "c", title="Alpha"), a_card("b", "todo", "m")])
    board = stand.open(configuration={"id": "mine", "name": "Mine", "values": {}})
    board.by_test_id("filter-input").fill("alpha")
    board.by_test_id("density-toggle").click()

    def saved() -> dict[str, Any]:
        return dict(board.configuration()["values"].get("view") or {})

    wait_until(lambda: saved().get("density") == "compact")
    wait_until(lambda: saved()["filter"]["text"] == "alpha")
    mine = {"id": "mine", "name": "Mine", "values": {"view": saved()}}

    board.switch_configuration({"id": "other", "name": "Other", "values": {}})
    board.wait_for("boardDebug.state.configuration === 'other'")
    board.wait_for("boardDebug.state.view.density === 'comfortable'")
    assert board.by_test_id("filter-input").input_value() == ""
    assert column_titles(board, "todo") == ["Alpha", "B"]

    # Switching back hands the page the values the server keeps for it.
    board.switch_configuration(mine)
    board.wait_for("boardDebug.state.view.filter.text === 'alpha'")
    assert board.by_test_id("filter-input").input_value() == "alpha"
    assert column_titles(board, "todo") == ["Alpha"]


def test_a_slow_answer_from_before_a_switch_never_overwrites_the_new_view(stand: Stand) -> None:
    seed_board(stand.world, [a_card("a", "todo", "c", title="Alpha")])
    board = stand.open()
    stand.world.delay("board:cards", 1.0)
    slow = {"view": {"filter": {"text": "from slow"}, "density": "compact"}}
    fast = {"view": {"filter": {"text": "from fast"}}}

    board.switch_configuration({"id": "slow", "name": "Slow", "values": slow})
    time.sleep(0.1)
    board.switch_configuration({"id": "fast", "name": "Fast", "values": fast})
    board.wait_for("boardDebug.state.view.filter.text === 'from fast'")
    time.sleep(1.4)
    assert board.board_state()["view"]["filter"]["text"] == "from fast"
    assert board.board_state()["view"]["density"] == "comfortable"
    assert board.by_test_id("filter-input").input_value() == "from fast"


# --- the Board and the Inventory together ------------------------------------------------------


def seed_inventory(world: World, count: int) -> None:
    world.put_many(INVENTORY, {"stock:pens": {"name": "Pens", "count": count}, "items": ["pens"]})


def test_use_one_takes_from_the_inventory_and_stops_at_zero(stand: Stand) -> None:
    seed_inventory(stand.world, 1)
    seed_board(stand.world, [a_card("a", "todo", "c", item="pens")])
    board = stand.open()
    inventory = stand.open(INVENTORY)
    board.wait_for("boardDebug.state.stock.pens && boardDebug.state.stock.pens.count === 1")
    assert board.by_test_id("stock-a").inner_text() == "Pens: 1 in stock"

    board.by_test_id("use-one-a").click()
    wait_until(lambda: stand.world.get(INVENTORY, "stock:pens") == {"name": "Pens", "count": 0})
    board.by_test_id("stock-a").filter(has_text="Pens: 0 in stock").wait_for()
    assert board.by_test_id("use-one-a").is_disabled()
    inventory.by_test_id("count-pens").filter(has_text="0").wait_for()

    inventory.by_test_id("inc-pens").click()
    board.by_test_id("stock-a").filter(has_text="Pens: 1 in stock").wait_for()
    assert board.by_test_id("use-one-a").is_enabled()


def test_use_one_refuses_when_the_last_one_went_meanwhile(stand: Stand) -> None:
    seed_inventory(stand.world, 1)
    seed_board(stand.world, [a_card("a", "todo", "c", item="pens")])
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
    assert stand.world.get(INVENTORY, "stock:pens")["count"] == 0


def test_the_item_picker_links_a_card_to_an_inventory_item(stand: Stand) -> None:
    seed_inventory(stand.world, 5)
    seed_board(stand.world, [a_card("a", "todo", "c")])
    board = stand.open()
    board.by_test_id("card-a").focus()
    board.by_test_id("card-a").press("Enter")
    picker = board.by_test_id("card-item-input")
    board.frame.locator("#card-item-input:not([disabled])").wait_for()
    picker.select_option("pens")
    board.by_test_id("card-save").click()
    wait_until(lambda: stand.world.get(BOARD, "card:a").get("item") == "pens")
    board.by_test_id("stock-a").filter(has_text="Pens: 5 in stock").wait_for()


@pytest.mark.parametrize("inventory_declares_board", [False])
def test_a_pending_relationship_shows_inventory_unavailable(stand: Stand) -> None:
    seed_board(stand.world, [a_card("a", "todo", "c", item="pens")])
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
    wait_until(lambda: len(stand.world.get(INVENTORY, "items") or []) == 1)
    (item,) = stand.world.get(INVENTORY, "items")
    assert item.startswith("blue-pens-")
    assert stand.world.get(INVENTORY, f"stock:{item}") == {"name": "Blue pens", "count": 3}

    inventory.by_test_id(f"inc-{item}").click()
    wait_until(lambda: stand.world.get(INVENTORY, f"stock:{item}")["count"] == 4)
    for _ in range(4):
        inventory.by_test_id(f"dec-{item}").click()
        time.sleep(0.05)
    wait_until(lambda: stand.world.get(INVENTORY, f"stock:{item}")["count"] == 0)
    assert inventory.by_test_id(f"dec-{item}").is_disabled()

    stand.world.put(INVENTORY, f"stock:{item}", {"name": "Blue pens", "count": 12})
    inventory.by_test_id(f"count-{item}").filter(has_text="12").wait_for()


def test_a_guest_cannot_change_the_inventory(stand: Stand) -> None:
    seed_inventory(stand.world, 2)
    guest = stand.open(INVENTORY, role="guest")
    guest.by_test_id("readonly-note").wait_for()
    guest.by_test_id("count-pens").filter(has_text="2").wait_for()
    assert guest.by_test_id("inc-pens").count() == 0, "no controls that could only fail"
    refused = guest.evaluate(
        "steamHarnessKanban.kv.setValue('stock:pens', {name: 'Pens', count: 9})"
        ".then(() => 'written', (err) => err.code)"
    )
    assert refused == "forbidden"
    assert stand.world.get(INVENTORY, "stock:pens")["count"] == 2


# --- the test host itself --------------------------------------------------------------------

#: A plugin as a third party writes one from the seeds' example: the bridge called at the
#: top of the script, nothing awaited first.
NAIVE_PLUGIN = {
    "index.html": (
        '<!doctype html><meta charset="utf-8"><p data-testid="visits">...</p>'
        '<script src="/static/bridge/kanban.js"></script><script src="app.js"></script>'
    ),
    "app.js": (
        "steamHarnessKanban.kv.updateValue('visits', (n) => (n || 0) + 1).then((n) => {\n"
        "  document.querySelector('[data-testid=visits]').textContent = String(n);\n"
        "});\n"
    ),
}


def test_a_plugin_calling_the_bridge_at_once_is_answered_after_every_reload(
    stand: Stand, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, text in NAIVE_PLUGIN.items():
        (tmp_path / name).write_text(text)
    monkeypatch.setitem(FOLDERS, "naive", tmp_path)
    plugin = stand.open("naive")
    plugin.by_test_id("visits").filter(has_text="1").wait_for()
    for visit in range(2, 12):
        plugin.page.evaluate(
            "n => { const f = document.getElementById(n); f.src = f.src; }", plugin.name
        )
        plugin.by_test_id("visits").filter(has_text=str(visit)).wait_for()
    assert stand.world.get("naive", "visits") == 11
    assert stand.world.ops(project="naive") == ["get", "set"] * 11
    assert plugin.errors == []


# --- looks -------------------------------------------------------------------------------------


def showcase(world: World) -> None:
    stock = {"pens": {"name": "Pens", "count": 7}, "paper": {"name": "Printer paper", "count": 0}}
    world.put_many(INVENTORY, {f"stock:{k}": v for k, v in stock.items()} | {"items": list(stock)})
    seed_board(
        world,
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
    showcase(stand.world)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    wide = stand.open()
    wide.by_test_id("stock-c2").filter(has_text="Pens: 7 in stock").wait_for()
    assert "due-overdue" in (wide.by_test_id("due-c3").get_attribute("class") or "")
    assert "due-later" in (wide.by_test_id("due-c1").get_attribute("class") or "")
    wide.by_test_id("wip-warning-doing").wait_for()
    boxes = [wide.by_test_id(f"column-{c}").bounding_box() for c in ("todo", "doing", "done")]
    assert boxes[0]["y"] == boxes[1]["y"] == boxes[2]["y"], "columns side by side"
    assert boxes[2]["x"] + boxes[2]["width"] <= 1280
    wide.screenshot("plugins-board-1280x800.png")

    wide.by_test_id("card-c1").focus()
    wide.screenshot("plugins-board-focus.png")
    wide.by_test_id("density-toggle").click()
    wide.screenshot("plugins-board-compact.png")

    wide.by_test_id("card-c1").press("Enter")
    wide.by_test_id("card-title-input").wait_for()
    wide.screenshot("plugins-board-dialog.png")
    wide.by_test_id("card-title-input").press("Escape")

    narrow = stand.open(viewport={"width": 420, "height": 800})
    narrow.by_test_id("card-c1").wait_for()
    tops = [narrow.by_test_id(f"column-{c}").bounding_box() for c in ("todo", "doing")]
    assert tops[1]["y"] > tops[0]["y"], "columns stack on a narrow window"
    assert tops[0]["width"] <= 420
    narrow.screenshot("plugins-board-420.png")

    inventory = stand.open(INVENTORY)
    inventory.by_test_id("count-pens").wait_for()
    inventory.screenshot("plugins-inventory-1280x800.png")
    assert wide.errors == narrow.errors == inventory.errors == []
