"""The bridge end to end: people in Chromium, boards whose plugins run in sandboxed iframes,
daphne workers on the test database, and the Django admin narrowing a grant.

Everything that must reach a plugin as an event happens inside a worker (a plugin's own
write, or the admin form), because without Redis each worker has its own in-memory channel
layer. With ``REDIS_URL`` set, the people below sit on two different workers, so their
events cross processes through Redis as in production.

The projects come from the package folders in ``plugins/``: the probe board relates to the
inventory (alias ``inventory``), which grants it read and write; the raw board is a plugin
that speaks the port protocol by hand.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import BrowserContext, expect
from websockets.sync.client import connect
from websockets.typing import Origin

from kanban.access.grant_rules import Grant, Rule
from kanban.access.memberships import membership_set
from kanban.access.relationships import declarations_of
from kanban.models import Project
from kanban.projects.packages import project_import
from storage.kv import Dataset, Entry, kv_get, kv_scan
from tests.browser.boards import (
    ABSENT,
    INVENTORY_ID,
    PLUGINS,
    PROBE_ID,
    RAW_ID,
    Refused,
    open_board,
)
from tests.browser.helpers import log_in_by_cookie, login, screenshot
from tests.factories import a_user
from tests.live import LiveServer

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "correct horse battery staple"

#: Frames naming what only the server may decide; each would be a valid ``set`` without
#: its last field.
FRAMES_WITH_FORBIDDEN_FIELDS = [
    {"v": 1, "id": 1, "op": "set", "key": "stock", "value": 1, "projectId": str(INVENTORY_ID)},
    {"v": 1, "id": 2, "op": "set", "key": "stock", "value": 2, "scope": "conversation"},
    {"v": 1, "id": 3, "op": "set", "key": "stock", "value": 3, "target": str(INVENTORY_ID)},
    {"v": 1, "id": 4, "op": "set", "key": "stock", "value": 4, "path": "/ws/boards/"},
]


@dataclass(frozen=True)
class Projects:
    probe: Project
    inventory: Project
    raw: Project


@pytest.fixture
def projects() -> Projects:
    return Projects(
        probe=project_import(path=PLUGINS / "probe"),
        inventory=project_import(path=PLUGINS / "inventory"),
        raw=project_import(path=PLUGINS / "raw"),
    )


@pytest.fixture
def alice(projects: Projects) -> User:
    """A developer on every board and on the inventory."""
    alice = a_user("alice")
    for project in (projects.probe, projects.inventory, projects.raw):
        membership_set(user=alice, project=project, role="developer")
    return alice


@pytest.fixture
def bob(projects: Projects) -> User:
    """A developer on the probe board and the inventory."""
    bob = a_user("bob")
    for project in (projects.probe, projects.inventory):
        membership_set(user=bob, project=project, role="developer")
    return bob


@pytest.fixture
def charlie(db: None) -> User:
    """The administrator; he never opens a board."""
    return a_user("charlie", superuser=True)


@pytest.fixture
def worker(live_servers: Callable[..., list[LiveServer]]) -> Callable[[int], LiveServer]:
    """``worker(n)``: the n-th daphne worker, started when first asked for. Without Redis
    every n is the one worker, since in-memory channel layers do not cross processes."""
    started: list[LiveServer] = []
    count = 2 if os.environ.get("REDIS_URL") else 1

    def nth(index: int) -> LiveServer:
        index = min(index, count - 1)
        while len(started) <= index:
            started.extend(live_servers(1))
        return started[index]

    return nth


@pytest.fixture
def person(
    new_context: Callable[..., BrowserContext], worker: Callable[[int], LiveServer]
) -> Callable[..., BrowserContext]:
    """``person(user, on_worker=0)``: a browser profile signed in as ``user``, talking to
    ``worker(on_worker)``."""

    def sign_in(user: User, *, on_worker: int = 0) -> BrowserContext:
        server = worker(on_worker)
        context = new_context(base_url=server.url)
        log_in_by_cookie(context, user, server.url)
        return context

    return sign_in


def stored(project_id: UUID, key: str) -> Any:
    found = kv_get(dataset=Dataset(project_id), key=key)
    return ABSENT if found is None else found.value


def entry(project_id: UUID, key: str) -> Entry:
    found = kv_get(dataset=Dataset(project_id), key=key)
    assert found is not None, f"{key!r} is not stored in {project_id}"
    return found


def revision_of(project_id: UUID, key: str) -> str:
    return entry(project_id, key).revision


def keys_of(project_id: UUID) -> list[str]:
    return [entry.key for entry in kv_scan(dataset=Dataset(project_id))]


# --- calls and events ------------------------------------------------------------------------


@pytest.mark.browser
def test_alice_logs_in_and_her_plugin_uses_its_own_project_and_the_related_one(
    alice: User, new_context: Callable[..., BrowserContext], live_server: LiveServer
) -> None:
    alice.set_password(PASSWORD)
    alice.save()
    context = new_context(base_url=live_server.url)
    login(context.new_page(), "alice", PASSWORD)

    board = open_board(context, PROBE_ID)
    expect(board.page.locator("header.top")).to_contain_text("Probe board")
    plugin = board.plugin
    plugin.wait_until_ready()
    plugin.subscribe()
    plugin.subscribe(alias="inventory")

    assert plugin.get("cards") is ABSENT
    plugin.set("cards", ["write the tests"])
    assert plugin.get("cards") == ["write the tests"]
    assert plugin.add("done", 1) == 1
    assert plugin.add("done", 2) == 3

    assert plugin.get("stock", alias="inventory") is ABSENT
    plugin.set("stock", {"bolts": 10}, alias="inventory")
    assert plugin.get("stock", alias="inventory") == {"bolts": 10}
    assert plugin.add("restocks", 1, alias="inventory") == 1

    # The server chose the target from the alias and recorded who wrote through what.
    assert stored(PROBE_ID, "cards") == ["write the tests"]
    assert stored(PROBE_ID, "done") == 3
    assert stored(INVENTORY_ID, "stock") == {"bolts": 10}
    source = entry(INVENTORY_ID, "stock").source
    assert source is not None
    assert (source["user"], source["via"], source["alias"]) == ("alice", "bridge", "inventory")
    assert source["consumerProject"] == str(PROBE_ID)

    own = plugin.wait_for("revision", alias=None, count=3)
    related = plugin.wait_for("revision", alias="inventory", count=2)
    assert own[-1]["revision"] == revision_of(PROBE_ID, "done")
    assert related[-1]["revision"] == revision_of(INVENTORY_ID, "restocks")
    assert plugin.seen("invalidated") == []
    expect(board.status).to_have_text("Live")
    screenshot(board.page, "board-probe")


@pytest.mark.browser
def test_alice_and_bob_see_each_others_writes_through_subscribe(
    alice: User, bob: User, person: Callable[..., BrowserContext]
) -> None:
    alices = open_board(person(alice, on_worker=0), PROBE_ID).plugin
    bobs = open_board(person(bob, on_worker=1), PROBE_ID).plugin
    for plugin in (alices, bobs):
        plugin.wait_until_ready()
        plugin.subscribe()
        plugin.subscribe(alias="inventory")

    bobs.set("cards", ["from bob"])
    (event,) = alices.wait_for("revision", alias=None)
    assert event["revision"] == revision_of(PROBE_ID, "cards")
    assert alices.get("cards") == ["from bob"]

    alices.add("stock", 5, alias="inventory")
    (event,) = bobs.wait_for("revision", alias="inventory")
    assert event["revision"] == revision_of(INVENTORY_ID, "stock")
    assert bobs.get("stock", alias="inventory") == 5

    # Each saw the other's write and its own, once each.
    assert len(alices.wait_for("revision", count=2)) == 2
    assert len(bobs.wait_for("revision", count=2)) == 2
    assert [len(alices.seen("revision")), len(bobs.seen("revision"))] == [2, 2]


@pytest.mark.browser
def test_an_admin_narrowing_the_grant_invalidates_the_subscription_and_later_calls_are_refused(
    alice: User, charlie: User, person: Callable[..., BrowserContext]
) -> None:
    board = open_board(person(alice, on_worker=0), PROBE_ID)
    plugin = board.plugin
    plugin.wait_until_ready()
    plugin.subscribe()
    plugin.subscribe(alias="inventory")
    plugin.set("stock", 7, alias="inventory")
    plugin.wait_for("revision", alias="inventory")

    admin = person(charlie, on_worker=1).new_page()
    admin.goto(f"/admin/kanban/project/{INVENTORY_ID}/change/")
    expect(admin.locator('input[name="relationships-0-alias"]')).to_have_value("board")
    expect(admin.locator(".relationship-status-confirmed")).to_be_visible()
    admin.locator('select[name="relationships-0-read_mode"]').select_option("none")
    admin.locator('select[name="relationships-0-write_mode"]').select_option("none")
    screenshot(admin, "admin-grant-narrowing")
    admin.locator('input[name="_save"]').click()
    expect(admin.locator(".messagelist")).to_contain_text("was changed successfully")
    (declaration,) = declarations_of(Project.objects.get(pk=INVENTORY_ID))
    assert declaration.grant == Grant(read=Rule("none"), write=Rule("none"))

    (invalidated,) = plugin.wait_for("invalidated")
    assert invalidated == {"kind": "invalidated", "alias": "inventory", "code": "forbidden"}
    with pytest.raises(Refused) as refused:
        plugin.get("stock", alias="inventory")
    assert refused.value.code == "forbidden"
    with pytest.raises(Refused) as refused:
        plugin.set("stock", 8, alias="inventory")
    assert refused.value.code == "forbidden"
    assert stored(INVENTORY_ID, "stock") == 7

    # Its own project is untouched by the change: still subscribed, still writable.
    plugin.set("cards", [])
    plugin.wait_for("revision", alias=None)
    assert plugin.seen("invalidated") == [invalidated]
    screenshot(board.page, "board-invalidated")


# --- the sandbox -----------------------------------------------------------------------------

_SANDBOX_FACTS = """async () => {
  const thrown = (touch) => {
    try { touch(); return "allowed"; } catch (error) { return error.name; }
  };
  const violations = [];
  addEventListener("securitypolicyviolation", (e) => violations.push(e.effectiveDirective));
  let fetched;
  try {
    const response = await fetch("/api/v1/schema/");
    fetched = "status " + response.status;
  } catch (error) {
    fetched = error.name;
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
  return {
    origin: self.origin,
    cookie: thrown(() => document.cookie),
    parentDocument: thrown(() => parent.document.title),
    localStorage: thrown(() => localStorage.length),
    fetch: fetched,
    violations,
  };
}"""


@pytest.mark.browser
def test_the_plugin_runs_in_an_opaque_origin_that_reaches_nothing_but_the_bridge(
    alice: User, person: Callable[..., BrowserContext]
) -> None:
    board = open_board(person(alice), PROBE_ID)
    board.plugin.wait_until_ready()

    facts = board.frame.evaluate(_SANDBOX_FACTS)

    assert facts == {
        "origin": "null",
        "cookie": "SecurityError",
        "parentDocument": "SecurityError",
        "localStorage": "SecurityError",
        "fetch": "TypeError",
        "violations": ["connect-src"],
    }
    # The same probe on the host page itself is allowed everything: it is the sandbox that
    # refuses, not a broken probe.
    host = board.page.evaluate(_SANDBOX_FACTS)
    assert host["origin"] == board.page.url.split("/boards/")[0]
    assert (host["cookie"], host["localStorage"], host["fetch"]) == (
        "allowed",
        "allowed",
        "status 200",
    )


_FOREIGN_FRAME = """() => new Promise((resolve) => {
  const frame = document.createElement("iframe");
  frame.name = "foreign";
  frame.setAttribute("sandbox", "allow-scripts");
  frame.srcdoc = "<!doctype html><p>a frame the board did not load</p>";
  frame.onload = () => resolve(true);
  document.body.append(frame);
})"""

_COUNT_FOREIGN_MESSAGES = """() => {
  const foreign = document.querySelector('iframe[name="foreign"]').contentWindow;
  window.foreignMessages = 0;
  addEventListener("message", (e) => { if (e.source === foreign) window.foreignMessages++; });
}"""

_IMPERSONATE = """() => new Promise((resolve) => {
  const heard = [];
  addEventListener("message", (e) => heard.push({data: e.data, ports: e.ports.length}));
  const post = (message) => parent.postMessage(message, "*");
  let hellos = 0;
  const timer = setInterval(() => {
    post({type: "steamHarnessKanban:hello", v: 1});
    post({v: 1, type: "ready", nonce: "0".repeat(32)});
    post({v: 1, id: 1, op: "set", key: "foreign", value: "relayed"});
    post({v: 1, id: 2, op: "set", alias: "inventory", key: "foreign", value: "relayed"});
    post({v: 1, id: 3, op: "subscribe", alias: "inventory"});
    if (++hellos === 8) {
      clearInterval(timer);
      setTimeout(() => resolve(heard), 400);
    }
  }, 150);
})"""


@pytest.mark.browser
def test_a_foreign_sandboxed_frame_on_the_board_gets_no_port_and_nothing_relayed(
    alice: User, person: Callable[..., BrowserContext]
) -> None:
    board = open_board(person(alice), PROBE_ID)
    plugin = board.plugin
    plugin.wait_until_ready()
    sent_before = len(board.sent)

    assert board.page.evaluate(_FOREIGN_FRAME)
    foreign = board.page.locator('iframe[name="foreign"]').element_handle().content_frame()
    assert foreign is not None and foreign != board.frame
    board.page.evaluate(_COUNT_FOREIGN_MESSAGES)
    heard = foreign.evaluate(_IMPERSONATE)

    assert board.page.evaluate("() => window.foreignMessages") == 8 * 5, "they did arrive"
    assert heard == [], "the host answered a frame that is not its plugin"
    assert board.sent[sent_before:] == [], "the host relayed something for the foreign frame"
    assert keys_of(PROBE_ID) == keys_of(INVENTORY_ID) == []
    # The board's own plugin is unaffected.
    plugin.set("cards", ["still mine"])
    assert stored(PROBE_ID, "cards") == ["still mine"]
    assert [frame["op"] for frame in board.sent[sent_before:]] == ["set"]


# --- frames that name what only the server decides -------------------------------------------


@pytest.mark.browser
def test_the_host_refuses_frames_naming_a_project_scope_target_or_path_and_sends_none(
    alice: User, person: Callable[..., BrowserContext]
) -> None:
    board = open_board(person(alice), RAW_ID)
    assert board.frame.evaluate("() => raw.connected")
    sent_before = len(board.sent)

    for frame in FRAMES_WITH_FORBIDDEN_FIELDS:
        reply = board.frame.evaluate("(frame) => raw.send(frame)", frame)
        assert reply["id"] == frame["id"]
        assert reply["ok"] is False
        assert reply["error"]["code"] == "invalid_argument", reply

    assert board.sent[sent_before:] == [], "a refused frame reached the server"
    assert keys_of(RAW_ID) == keys_of(INVENTORY_ID) == []
    # The same frame without the extra field goes through: the refusals were about it.
    reply = board.frame.evaluate(
        "(frame) => raw.send(frame)", {"v": 1, "id": 5, "op": "set", "key": "stock", "value": 5}
    )
    assert reply["ok"] is True, reply
    (relayed,) = board.sent[sent_before:]
    assert set(relayed) == {"v", "id", "op", "key", "value"}
    assert (relayed["op"], relayed["key"], relayed["value"]) == ("set", "stock", 5)
    assert stored(RAW_ID, "stock") == 5
    assert keys_of(INVENTORY_ID) == []
    screenshot(board.page, "board-raw")


def test_the_server_refuses_the_same_frames_sent_over_a_hand_opened_websocket(
    live_server: LiveServer, alice: User
) -> None:
    client = Client()
    client.force_login(alice)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value

    with connect(
        f"{live_server.ws_url}/ws/boards/{RAW_ID}/",
        origin=Origin(live_server.url),
        additional_headers={"Cookie": f"{settings.SESSION_COOKIE_NAME}={session}"},
        open_timeout=10,
    ) as socket:
        assert json.loads(socket.recv(timeout=10))["event"] == "context"
        replies = []
        for frame in FRAMES_WITH_FORBIDDEN_FIELDS:
            socket.send(json.dumps(frame))
            replies.append(json.loads(socket.recv(timeout=10)))
        assert keys_of(RAW_ID) == keys_of(INVENTORY_ID) == []
        socket.send(json.dumps({"v": 1, "id": 5, "op": "set", "key": "stock", "value": 5}))
        accepted = json.loads(socket.recv(timeout=10))

    for frame, reply in zip(FRAMES_WITH_FORBIDDEN_FIELDS, replies, strict=True):
        field = next(name for name in frame if name not in {"v", "id", "op", "key", "value"})
        assert reply["id"] == frame["id"]
        assert reply["ok"] is False
        assert reply["error"]["code"] == "invalid_argument"
        assert field in reply["error"]["message"]
    assert accepted["ok"] is True, accepted
    assert stored(RAW_ID, "stock") == 5
    assert keys_of(INVENTORY_ID) == []


# --- reloading -------------------------------------------------------------------------------


@pytest.mark.browser
def test_reloading_the_plugin_gives_the_new_document_a_working_channel(
    alice: User, person: Callable[..., BrowserContext]
) -> None:
    board = open_board(person(alice), PROBE_ID)
    first = board.plugin
    first.wait_until_ready()
    first.subscribe(alias="inventory")
    first.set("cards", ["before the reload"])

    second = board.reload_plugin()

    assert second.seen("ready") == [{"kind": "ready"}]
    assert second.get("cards") == ["before the reload"]
    second.subscribe()
    second.set("cards", ["after the reload"])
    (event,) = second.wait_for("revision", alias=None)
    assert event["revision"] == revision_of(PROBE_ID, "cards")
    # The old document's subscription went with it; the host's websocket did not.
    unsubscribes = [frame for frame in board.sent if frame["op"] == "unsubscribe"]
    assert [frame.get("alias") for frame in unsubscribes] == ["inventory"]
    assert len(board.sockets) == 1
    assert not board.sockets[0].is_closed()
    expect(board.status).to_have_text("Live")
