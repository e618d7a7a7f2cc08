"""R14: the production topology, for real. Debian's nginx runs the repository's
``deploy/nginx.conf`` (this copy changes only the upstream addresses and the listen port) in
front of three daphne workers on PostgreSQL and Redis; people use it through nginx only.

Through nginx: alice logs in with the real form and opens the Board in Chromium; a write
through one worker reaches viewers on the others; a Knowledge document at its size limit
is accepted; a websocket stays open past nginx's idle timeouts; killing a worker while
writes are in flight loses no acknowledged write, and the Board reconnects to another
worker and keeps hearing changes. And a forged ``X-Forwarded-Proto`` changes nothing for
a production worker behind the same configuration.

Runs on PostgreSQL + Redis (CI's second pass) when nginx is installed;
``KANBAN_REQUIRE_NGINX=1`` makes its absence a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import connection
from playwright.sync_api import BrowserContext, Page, expect
from websockets.sync.client import connect

from bench.nginx import NGINX, Nginx
from bench.nginx import nginx_in_front_of as proxy_in_front_of
from kanban.accounts.tokens import token_create
from kanban.data.demo import demo_load
from kanban.models import Project
from storage import engine, limits
from storage.namespaces import dataset_value
from tests.browser.helpers import login
from tests.factories import a_user
from tests.kanban.bridge.helpers import session_cookie
from tests.kanban.bridge.test_scale_out import redis_layer, redis_reachable
from tests.live import HOST, LiveServer, Visitor

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.redis]
__all__ = ["redis_layer"]

#: Longer than every idle timeout nginx applies by default (60 s reads, 75 s keep-alive is
#: for idle HTTP connections, which an upgraded one is not).
IDLE_SECONDS = 65
METRICS_TOKEN = "r14-metrics-" + "s" * 32


def _unavailable() -> str | None:
    if connection.vendor != "postgresql" or not redis_reachable():
        return "the production topology runs on PostgreSQL and Redis"
    if not os.access(NGINX, os.X_OK):
        return "nginx is not installed (apt-get install nginx)"
    return None


@pytest.fixture(autouse=True)
def _needs_the_topology() -> None:
    why = _unavailable()
    if why is None:
        return
    if os.environ.get("KANBAN_REQUIRE_NGINX") == "1" and "nginx" in why:
        pytest.fail(f"KANBAN_REQUIRE_NGINX=1 but {why}")
    pytest.skip(why)


def nginx_in_front_of(servers: list[LiveServer]) -> contextlib.AbstractContextManager[Nginx]:
    """The repository's nginx configuration in front of these workers (bench/nginx.py)."""
    return proxy_in_front_of([server.port for server in servers])


def request(url: str, *, method: str = "GET", body: Any = None, **headers: str) -> Any:
    data = None if body is None else json.dumps(body).encode()
    sent = urllib.request.Request(url, data=data, method=method, headers=headers)
    if data is not None:
        sent.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(sent, timeout=120) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, None


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def status_and_location(url: str, **headers: str) -> tuple[int, str]:
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers), timeout=10) as answer:
            return answer.status, ""
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location", "")


def sockets_on(server: LiveServer) -> int:
    return server.output(tail=10**7).count("WSCONNECT /ws/boards/")


@dataclass
class Writes:
    """REST writes through nginx, each of its own key, and which ones were acknowledged."""

    base: str
    token: str
    acknowledged: list[str] = field(default_factory=list)
    refused: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            key = f"load:{n}"
            status, _ = request(
                f"{self.base}/kv/{key}",
                method="PUT",
                body={"value": n},
                Authorization=f"Bearer {self.token}",
            )
            if status == 200:
                self.acknowledged.append(key)
            else:
                self.refused += 1


def retitle(api: str, token: str, title: str) -> None:
    """Give the demo's card c1 a new title through the REST API at ``api``."""
    card = {"id": "c1", "title": title, "column": "todo"}
    status, _ = request(
        f"{api}/kv/card:c1", method="PUT", body={"value": card}, Authorization=f"Bearer {token}"
    )
    assert status == 200


def card_title_is(page: Page, title: str, timeout: float = 10.0) -> None:
    condition = f"boardDebug.state.cards.find((c) => c.id === 'c1')?.title === {json.dumps(title)}"
    deadline = time.monotonic() + timeout
    while True:
        frame = page.frame(url=re.compile(r"/plugins/[0-9a-f-]+/index\.html$"))
        if frame is not None and frame.evaluate(f"!!window.boardDebug && {condition}"):
            return
        assert time.monotonic() < deadline, f"card c1 never became {title!r}"
        page.wait_for_timeout(50)


def open_one_board_per_worker(
    context: BrowserContext, page: Page, proxy: Nginx, workers: list[LiveServer], board: Project
) -> list[Page]:
    """Board pages through nginx whose sockets are on different workers. nginx spreads
    requests round-robin: where a socket landed on a worker that has one already, a few
    more requests shift the rotation and the page loads again. How many is random: a page
    load is nearly always the same number of requests, and a fixed shift that makes the
    sum a multiple of the workers puts every retry's socket back on the same worker."""
    pages: list[Page] = []
    held: set[int] = set()
    for _ in range(10 * len(workers)):
        before = [sockets_on(worker) for worker in workers]
        page.goto(f"/boards/{board.id}/")
        expect(page.locator("#bridge-status")).to_have_text("Live")
        landed = max(range(len(workers)), key=lambda i: sockets_on(workers[i]) - before[i])
        if landed in held:
            for _ in range(random.randint(1, len(workers))):
                request(f"{proxy.url}/healthz")
            continue
        held.add(landed)
        pages.append(page)
        if len(pages) == len(workers):
            return pages
        page = context.new_page()
    raise AssertionError(f"sockets stayed on workers {sorted(held)}")


@pytest.mark.long
def test_through_nginx_a_board_stays_live_across_three_workers_and_a_killed_one(
    live_servers: Callable[..., list[LiveServer]],
    redis_layer: dict[str, str],
    new_context: Callable[..., BrowserContext],
) -> None:
    logins = {login_.username: login_.password for login_ in demo_load()}
    board = Project.objects.get(name="Board")
    bob = board.memberships.get(user__username="bob").user
    token = token_create(user=bob)[1]
    workers = live_servers(3, env=redis_layer)
    with nginx_in_front_of(workers) as proxy, contextlib.ExitStack() as stack:
        api = f"{proxy.url}/api/v1/projects/{board.id}"
        idle = stack.enter_context(
            connect(
                f"ws://{HOST}:{proxy.port}/ws/boards/{board.id}/",
                additional_headers=[("Cookie", session_cookie(bob).decode())],
                origin=proxy.url,  # type: ignore[arg-type]
                open_timeout=10,
            )
        )
        idle_since = time.monotonic()
        assert json.loads(idle.recv(timeout=10))["event"] == "context"
        (idle_on,) = [worker for worker in workers if sockets_on(worker)]

        # alice logs in through the real form and opens the Board on each of the workers.
        context = new_context(base_url=proxy.url)
        page = context.new_page()
        login(page, "alice", logins["alice"])
        pages = open_one_board_per_worker(context, page, proxy, workers, board)

        # A write through one worker, straight to it, reaches every viewer on any worker.
        retitle(f"{workers[0].url}/api/v1/projects/{board.id}", token, "Written on worker 1")
        for page in pages:
            card_title_is(page, "Written on worker 1")

        # A Knowledge document at its limit, in the worst encoding, passes nginx.
        at_limit = {"title": "\U0001f4d8" * limits.MAX_TITLE_CHARS}
        at_limit["markdown"] = "\x01" * limits.DEFAULT_DOCUMENT_BYTES
        status, created = request(
            f"{api}/knowledge/documents/",
            method="POST",
            body=at_limit,
            Authorization=f"Bearer {token}",
        )
        assert status == 201 and created["size"] == limits.DEFAULT_DOCUMENT_BYTES

        # Kill the busiest worker (not the idle socket's) while writes are in flight.
        writes = Writes(api, token)
        writer = threading.Thread(target=writes.run)
        writer.start()
        time.sleep(1.0)
        victim = max((w for w in workers if w is not idle_on), key=sockets_on)
        victim.kill()
        time.sleep(2.0)
        writes.stop.set()
        writer.join(timeout=30)
        lost = [
            key
            for key in writes.acknowledged
            if engine.get_value(dataset_value(board.id, "kv", key)) is None
        ]
        print(
            f"R14: {len(writes.acknowledged)} writes acknowledged through nginx, "
            f"{writes.refused} refused around the kill, {len(lost)} lost"
        )
        assert writes.acknowledged and not lost

        # Every page, including those whose socket was on the dead worker, is live again
        # on another one and hears the next change.
        for page in pages:
            expect(page.locator("#bridge-status")).to_have_text("Live", timeout=15_000)
        retitle(api, token, "After the kill")
        for page in pages:
            card_title_is(page, "After the kill")

        # The idle socket outlived nginx's default idle timeouts and still answers.
        time.sleep(max(0.0, IDLE_SECONDS - (time.monotonic() - idle_since)))
        if idle.protocol.state.name != "OPEN":
            pytest.fail(f"the idle websocket closed: {idle.protocol.close_code}")
        idle.send(json.dumps({"v": 1, "id": 1, "op": "get", "key": "card:c1"}))
        reply = json.loads(idle.recv(timeout=10))
        if reply.get("event"):  # a change event may come first
            reply = json.loads(idle.recv(timeout=10))
        print(f"R14: an idle websocket stayed open {time.monotonic() - idle_since:.0f} s")
        assert reply["ok"] is True


def test_a_forged_x_forwarded_proto_changes_nothing_behind_nginx(
    live_servers: Callable[..., list[LiveServer]],
) -> None:
    production = {
        "KANBAN_MODE": "production",
        "SECRET_KEY": "r14-" + "x" * 60,
        "ALLOWED_HOSTS": HOST,
        "KANBAN_DEMO_DATA": "0",
        "KANBAN_METRICS_TOKEN": METRICS_TOKEN,
    }
    (worker,) = live_servers(1, env=production)
    forged = {"X-Forwarded-Proto": "https"}
    # Straight to the worker the header is trusted (it expects a TLS proxy in front)...
    assert status_and_location(f"{worker.url}/accounts/login/", **forged)[0] == 200
    with nginx_in_front_of([worker]) as proxy:
        # ...but nginx sets it from the connection: plain HTTP is still sent to HTTPS.
        status, location = status_and_location(f"{proxy.url}/accounts/login/", **forged)
        assert status == 301 and location.startswith("https://"), (status, location)
        assert status_and_location(f"{proxy.url}/healthz", **forged)[0] == 200
        # Prometheus scrapes the worker itself over plain HTTP; the proxy never routes it,
        # however the path is spelled.
        scrape = {"Authorization": f"Bearer {METRICS_TOKEN}"}
        assert status_and_location(f"{worker.url}/metrics", **scrape)[0] == 200
        for path in ("/metrics", "/metrics?format=text", "//metrics", "/%6Detrics"):
            assert status_and_location(f"{proxy.url}{path}", **scrape, **forged)[0] == 404, path
        assert status_and_location(f"{proxy.url}/metrics/", **scrape)[0] != 200


def test_behind_nginx_a_forged_x_forwarded_for_neither_hides_an_attacker_nor_locks_the_owner(
    live_servers: Callable[..., list[LiveServer]],
) -> None:
    """Three people on their own machines (loopback addresses): alice signs in from hers;
    an attacker guesses her password claiming her address in ``X-Forwarded-For``. nginx
    replaces the header with the address it saw, and the workers believe only nginx."""
    a_user("alice", password="the right one")
    env = {"KANBAN_TRUSTED_PROXIES": HOST, "KANBAN_LOGIN_MAX_FAILURES": "3"}
    (worker,) = live_servers(1, env=env)
    with nginx_in_front_of([worker]) as proxy:
        assert Visitor(proxy.url, source="127.0.0.2").log_in("alice", "the right one") == "/"
        attacker = Visitor(proxy.url, source="127.0.0.3")
        attacker.opener.addheaders.append(("X-Forwarded-For", "127.0.0.2"))
        for _ in range(3):
            attacker.log_in("alice", "a guess")
        _, page = attacker.submit_login("alice", "the right one")
        assert "Too many failed sign-ins" in page
        _, page = Visitor(proxy.url, source="127.0.0.4").submit_login("alice", "the right one")
        assert "Too many failed sign-ins" in page, "a new address is held to the account's count"
        assert Visitor(proxy.url, source="127.0.0.2").log_in("alice", "the right one") == "/"
