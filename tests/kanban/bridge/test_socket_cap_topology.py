"""One person's socket cap holds for the deployment through the production topology:
the repository's nginx in front of three daphne workers on PostgreSQL and Redis, as
in the production-topology scenario.
alice opens board sockets and inbox sockets at once through nginx; however nginx spreads
them, the deployment accepts exactly her cap of both kinds together, and closed sockets give
their places back on whichever worker held them.

Runs on PostgreSQL + Redis (CI's second pass) when nginx is installed;
``KANBAN_REQUIRE_NGINX=1`` makes its absence a failure.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from bench.nginx import nginx_in_front_of
from tests.factories import a_project, a_user
from tests.kanban.bridge.helpers import session_cookie
from tests.kanban.bridge.test_scale_out import redis_layer
from tests.live import HOST, LiveServer
from tests.reliability.test_r14_topology import _needs_the_topology

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]
__all__ = ["_needs_the_topology", "redis_layer"]

CAP = 12
LOCK = threading.Lock()


def try_open(
    stack: contextlib.ExitStack, url: str, cookie: str, origin: str
) -> ClientConnection | None:
    """A socket past its first frame (closed with ``stack``), or None when a worker refused
    it (4013)."""
    opening = connect(url, additional_headers=[("Cookie", cookie)], origin=origin, open_timeout=30)  # type: ignore[arg-type]
    with LOCK:
        socket = stack.enter_context(opening)
    try:
        json.loads(socket.recv(timeout=30))
    except ConnectionClosed as closed:
        assert closed.rcvd is not None and closed.rcvd.code == 4013, closed
        return None
    return socket


def test_through_nginx_board_and_inbox_sockets_share_one_cap_for_the_deployment(
    live_servers: Callable[..., list[LiveServer]], redis_layer: dict[str, str]
) -> None:
    alice = a_user("alice")
    board = a_project(name="Board", owner=alice)
    cookie = session_cookie(alice).decode()
    workers = live_servers(3, env=redis_layer | {"KANBAN_SOCKETS_PER_USER": str(CAP)})
    with (
        nginx_in_front_of([worker.port for worker in workers]) as proxy,
        contextlib.ExitStack() as stack,
    ):
        urls = [
            f"ws://{HOST}:{proxy.port}/ws/boards/{board.id}/",
            f"ws://{HOST}:{proxy.port}/ws/inbox/",
        ]

        def attempt(n: int) -> ClientConnection | None:
            return try_open(stack, urls[n % 2], cookie, proxy.url)

        with ThreadPoolExecutor(max_workers=16) as pool:
            tried = list(pool.map(attempt, range(3 * CAP)))
        opened = [socket for socket in tried if socket is not None]
        served = [worker.output(tail=10**7).count("WSCONNECT /ws/") > 0 for worker in workers]
        assert len(opened) == CAP, f"{len(opened)} of {3 * CAP} open; workers used {served}"
        assert attempt(0) is None and attempt(1) is None, "both kinds count against the cap"

        for socket in opened[:4]:
            socket.close()
        time.sleep(0.5)  # each worker gives its slot back as its socket closes
        with ThreadPoolExecutor(max_workers=8) as pool:
            again = list(pool.map(attempt, range(8)))
        assert sum(socket is not None for socket in again) == 4, "closed sockets free places"
