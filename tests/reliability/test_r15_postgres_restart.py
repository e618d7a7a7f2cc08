"""R15: PostgreSQL restarts under load, behind the production topology.

Three daphne workers behind the repository's nginx, on PostgreSQL (a private cluster this
test owns and restarts) and Redis. REST writers write keys of their own through nginx,
alice has the Board open in Chromium, bob's bridge sockets watch the cards, and PostgreSQL
is stopped for ``OUTAGE_SECONDS`` as an operator restarting it would (``pg_ctl -m fast``),
then started again.

Asserted: no acknowledged write is lost (each is in the database afterwards) and no refused
one is there (no partial write); every write during the outage is refused ``503
unavailable`` with a JSON body, never a 500 or a proxy error; every worker takes writes
again within ``RECOVERY_LIMIT`` seconds of PostgreSQL answering; the Board is Live again
and shows a change made after the restart, and so does every watching socket.

Bounded default: 10 s outage, 3 writers, 10 watching sockets. The full run:
``KANBAN_R15_OUTAGE_SECONDS=30 KANBAN_R15_WRITERS=12 KANBAN_R15_WATCHERS=100``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import psycopg
import pytest
from django.conf import settings
from playwright.sync_api import BrowserContext, expect
from websockets.sync.client import ClientConnection, connect

from storage.namespaces import dataset_value
from tests.browser.helpers import login
from tests.live import HOST, LiveServer, worker_env
from tests.reliability.postgres_cluster import private_cluster, server_binaries
from tests.reliability.test_r14_topology import (
    _needs_the_topology,
    card_title_is,
    nginx_in_front_of,
    redis_layer,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.redis]
__all__ = ["_needs_the_topology", "redis_layer"]

OUTAGE_SECONDS = float(os.environ.get("KANBAN_R15_OUTAGE_SECONDS", "10"))
WRITERS = int(os.environ.get("KANBAN_R15_WRITERS", "3"))
WATCHERS = int(os.environ.get("KANBAN_R15_WATCHERS", "10"))
RECOVERY_LIMIT = 5.0
#: Writing before the outage, and after PostgreSQL is back before the writers stop.
BEFORE_SECONDS, AFTER_SECONDS = 2.0, 6.0

SETUP = """
import json, django
django.setup()
from kanban.accounts.tokens import token_create
from kanban.data.demo import demo_load
from kanban.models import Project
from tests.kanban.bridge.helpers import session_cookie
logins = {login.username: login.password for login in demo_load()}
board = Project.objects.get(name="Board")
bob = board.memberships.get(user__username="bob").user
print(json.dumps({"board": str(board.id), "alice": logins["alice"],
                  "token": token_create(user=bob)[1], "cookie": session_cookie(bob).decode()}))
"""


def manage_python(env: dict[str, str], *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, *argv],
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def put(url: str, token: str, value: Any) -> tuple[int, dict[str, Any] | None]:
    """A REST write: its status and its JSON body (None when the body is not JSON)."""
    sent = urllib.request.Request(
        url,
        data=json.dumps({"value": value}).encode(),
        method="PUT",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(sent, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        body = error.read()
        try:
            return error.code, json.loads(body)
        except ValueError:
            return error.code, None


@dataclass
class Writer:
    """Writes keys of its own through nginx and sorts every answer."""

    api: str
    token: str
    name: str
    acknowledged: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # 503 unavailable, with a JSON body
    wrong: list[tuple[str, int, Any]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            key = f"r15:{self.name}:{n}"
            status, body = put(f"{self.api}/kv/{key}", self.token, n)
            if status == 200:
                self.acknowledged.append(key)
            elif status == 503 and body is not None and body.get("code") == "unavailable":
                self.refused.append(key)
                time.sleep(0.05)
            else:
                self.wrong.append((key, status, body))


@contextlib.contextmanager
def watcher(proxy_port: int, board: str, cookie: str) -> Iterator[ClientConnection]:
    with connect(
        f"ws://{HOST}:{proxy_port}/ws/boards/{board}/",
        additional_headers=[("Cookie", cookie)],
        origin=f"http://{HOST}:{proxy_port}",  # type: ignore[arg-type]
        open_timeout=10,
    ) as socket:
        assert json.loads(socket.recv(timeout=10))["event"] == "context"
        socket.send(json.dumps({"v": 1, "id": 1, "op": "watch", "value": {"prefix": "card:"}}))
        yield socket


def sees_title(socket: ClientConnection, title: str, timeout: float) -> bool:
    """Whether this socket hears card c1 get ``title`` (pushed, or named and then read)."""
    deadline = time.monotonic() + timeout
    asked = 100
    while time.monotonic() < deadline:
        try:
            message = json.loads(socket.recv(timeout=max(0.01, deadline - time.monotonic())))
        except TimeoutError:
            return False
        if message.get("id") == asked:
            value = (message.get("result") or {}).get("value") or {}
            if value.get("title") == title:
                return True
            continue
        for change in message.get("changes") or ():
            if change.get("key") != "card:c1":
                continue
            if "value" in change and change["value"].get("title") == title:
                return True
            asked += 1
            socket.send(json.dumps({"v": 1, "id": asked, "op": "get", "key": "card:c1"}))
        if message.get("event") == "resync":
            asked += 1
            socket.send(json.dumps({"v": 1, "id": asked, "op": "get", "key": "card:c1"}))
    return False


def first_write_after(worker: LiveServer, board: str, token: str, since: float) -> float:
    """Seconds from ``since`` until this worker, asked directly, takes a write."""
    n = 0
    while True:
        n += 1
        status, _ = put(f"{worker.url}/api/v1/projects/{board}/kv/r15:probe:{n}", token, n)
        if status == 200:
            return time.monotonic() - since
        assert time.monotonic() - since < 60, f"{worker!r} never took a write again"
        time.sleep(0.1)


def stored_keys(url: str, board: str, keys: list[str]) -> set[str]:
    namespace = dataset_value(UUID(board), "kv", "x").namespace
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT key FROM scalar_values WHERE namespace = %s AND key = ANY(%s)",
            (namespace, keys),
        ).fetchall()
    return {row[0] for row in rows}


@pytest.mark.long
def test_r15_postgresql_restarting_under_load_loses_nothing_and_every_worker_comes_back(
    live_servers: Callable[..., list[LiveServer]],
    redis_layer: dict[str, str],
    new_context: Callable[..., BrowserContext],
) -> None:
    if server_binaries() is None:
        pytest.skip("no PostgreSQL server binaries to run a private cluster")
    with private_cluster() as postgres:
        env = redis_layer | {"DATABASE_URL": postgres.url, "KANBAN_DEMO_DATA": "0"}
        manage_python(worker_env(env), "manage.py", "migrate", "--noinput")
        scene = json.loads(manage_python(worker_env(env), "-c", SETUP))
        board, token = scene["board"], scene["token"]
        workers = live_servers(3, env=env)
        with nginx_in_front_of(workers) as proxy, contextlib.ExitStack() as stack:
            api = f"{proxy.url}/api/v1/projects/{board}"
            context = new_context(base_url=proxy.url)
            page = context.new_page()
            login(page, "alice", scene["alice"])
            page.goto(f"/boards/{board}/")
            expect(page.locator("#bridge-status")).to_have_text("Live")
            watchers = [
                stack.enter_context(watcher(proxy.port, board, scene["cookie"]))
                for _ in range(WATCHERS)
            ]

            writers = [Writer(api, token, f"w{n}") for n in range(WRITERS)]
            threads = [threading.Thread(target=writer.run) for writer in writers]
            for thread in threads:
                thread.start()
            try:
                time.sleep(BEFORE_SECONDS)
                postgres.stop()
                time.sleep(OUTAGE_SECONDS)
                postgres.start()
                back = time.monotonic()
                recovery = [first_write_after(w, board, token, back) for w in workers]
                time.sleep(AFTER_SECONDS)
            finally:
                for writer in writers:
                    writer.stop.set()
                for thread in threads:
                    thread.join(timeout=90)

            title = "Written after the restart"
            card = {"id": "c1", "title": title, "column": "todo"}
            assert put(f"{api}/kv/card:c1", token, card)[0] == 200
            card_title_is(page, title, timeout=15)
            expect(page.locator("#bridge-status")).to_have_text("Live")
            converged = sum(sees_title(socket, title, timeout=10) for socket in watchers)

        acknowledged = [key for writer in writers for key in writer.acknowledged]
        refused = [key for writer in writers for key in writer.refused]
        wrong = [answer for writer in writers for answer in writer.wrong]
        stored = stored_keys(postgres.url, board, acknowledged + refused)
    print(
        f"R15: {OUTAGE_SECONDS:.0f} s outage; {len(acknowledged)} writes acknowledged, "
        f"{len(refused)} refused unavailable, {len(wrong)} other answers; workers took "
        f"writes again {', '.join(f'{s:.2f}' for s in recovery)} s after PostgreSQL "
        f"answered; {converged}/{len(watchers)} sockets and the Board saw the change after"
    )
    assert wrong == [], "every write in the outage is a 503 unavailable, never a 500"
    assert refused, "the outage refused writes (or it did not happen)"
    assert set(acknowledged) <= stored, "an acknowledged write was lost"
    assert not stored & set(refused), "a refused write was stored"
    assert max(recovery) <= RECOVERY_LIMIT
    assert converged == len(watchers)
