"""Daphne workers in subprocesses, on this run's test database (tests/live.py).

Each test here starts real workers; ``live_server`` makes the test transactional, so what
the test commits the workers see, and what they commit the test sees.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
import websockets
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db import connections
from django.test import Client

from storage import engine
from storage.addresses import value
from storage.writes import set_value
from tests.conftest import close_connections_everywhere
from tests.factories import a_project, a_user
from tests.live import (
    STARTS,
    LiveServer,
    LiveServerError,
    Visitor,
    open_board_socket,
    postgres_url,
)

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "correct horse battery staple"


@pytest.fixture
def alice() -> User:
    return a_user("alice", password=PASSWORD)


def health(server: LiveServer) -> dict[str, Any]:
    with urllib.request.urlopen(server.url + "/healthz", timeout=5) as response:
        return dict(json.load(response))


# --- one worker ------------------------------------------------------------------------------


def test_a_worker_answers_healthz_on_the_test_database(live_server: LiveServer) -> None:
    assert health(live_server) == {
        "status": "ok",
        "database": connections["default"].vendor,
        "redis": "ok" if settings.REDIS_URL else "unused",
    }
    assert live_server.running
    assert live_server.url == f"http://127.0.0.1:{live_server.port}"
    assert live_server.ws_url == f"ws://127.0.0.1:{live_server.port}"


def test_a_worker_serves_the_login_page(live_server: LiveServer) -> None:
    status, path, body = Visitor(live_server.url).get("/")
    assert (status, path) == (200, "/accounts/login/?next=/")
    assert 'name="csrfmiddlewaretoken"' in body
    assert 'name="username"' in body


def test_alice_created_by_the_test_logs_in_at_the_worker_and_her_session_is_visible_here(
    live_server: LiveServer, alice: User
) -> None:
    visitor = Visitor(live_server.url)
    assert visitor.log_in("alice", PASSWORD) == "/"
    status, path, body = visitor.get("/")
    assert (status, path) == (200, "/")
    assert "alice" in body
    (session,) = Session.objects.all()
    assert session.get_decoded()["_auth_user_id"] == str(alice.pk)


def test_a_wrong_password_is_refused_by_the_worker(live_server: LiveServer, alice: User) -> None:
    assert Visitor(live_server.url).log_in("alice", "not her password") == "/accounts/login/"
    assert not Session.objects.exists()


@contextmanager
def snapshot_reader() -> Iterator[Callable[[str], int]]:
    """A second connection to the test database holding one read snapshot open, as a slow
    report would: it counts rows as of its first read until the block ends."""
    settings_dict = connections["default"].settings_dict
    if connections["default"].vendor == "sqlite":
        with sqlite3.connect(settings_dict["NAME"], isolation_level=None, timeout=1) as raw:
            (mode,) = raw.execute("PRAGMA journal_mode").fetchone()
            assert mode == "wal", "without WAL a reader blocks the workers' writes"
            raw.execute("BEGIN")
            yield lambda table: raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            raw.execute("COMMIT")
    else:
        with psycopg.connect(postgres_url(settings_dict)) as raw:
            raw.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            yield lambda table: raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # type: ignore[index]
            raw.rollback()


def test_a_long_read_in_the_test_process_does_not_block_a_worker_writing(
    live_server: LiveServer, alice: User
) -> None:
    with snapshot_reader() as count:
        assert count("django_session") == 0
        assert Visitor(live_server.url).log_in("alice", PASSWORD) == "/"
        assert count("django_session") == 0, "the reader keeps its snapshot"
    assert Session.objects.count() == 1


def test_stop_ends_the_worker_politely_and_reaps_it(live_server: LiveServer) -> None:
    assert live_server.stop() == 0
    assert not live_server.running
    assert live_server.stop() == 0, "stopping twice is harmless"
    with pytest.raises(urllib.error.URLError):
        health(live_server)


def test_a_worker_that_cannot_start_fails_the_test_with_its_own_output(
    live_servers: Callable[..., list[LiveServer]],
) -> None:
    with pytest.raises(LiveServerError) as excinfo:
        live_servers(1, env={"KANBAN_MODE": "production", "SECRET_KEY": ""})
    assert "exited with code" in str(excinfo.value)
    assert "production needs SECRET_KEY" in str(excinfo.value)


def test_a_worker_of_a_tests_own_settings_is_forked_and_reads_them(
    live_servers: Callable[..., list[LiveServer]], tmp_path: Path
) -> None:
    """The zygote (tests/zygote.py) imported Django once, for every worker: one started with
    settings of its own still reads them, and one whose settings change what the zygote
    imported starts by itself."""
    forked = STARTS["forked"]
    live_servers(1)
    with pytest.raises(LiveServerError, match="production needs SECRET_KEY"):
        live_servers(1, env={"KANBAN_MODE": "production", "SECRET_KEY": ""})
    assert STARTS["forked"] == forked + 2

    cold = STARTS["cold"]
    live_servers(1, env={"PROMETHEUS_MULTIPROC_DIR": str(tmp_path)})
    assert STARTS["cold"] == cold + 1


# --- websockets --------------------------------------------------------------------------------


async def handshake_status(
    url: str, origin: str | None, headers: dict[str, str] | None = None
) -> int:
    """The HTTP status a refused handshake got; fails the test if it was accepted."""
    with pytest.raises(websockets.InvalidStatus) as excinfo:
        async with websockets.connect(
            url,
            origin=origin,  # type: ignore[arg-type]
            additional_headers=headers,
            open_timeout=10,
        ):
            pass
    return excinfo.value.response.status_code


async def test_a_websocket_to_a_path_with_no_route_is_refused(live_server: LiveServer) -> None:
    status = await handshake_status(live_server.ws_url + "/ws/nowhere/", origin=live_server.url)
    # The origin passed; the router found nothing and the handshake failed inside the app.
    assert status == 500


async def test_a_websocket_from_a_foreign_origin_is_refused_before_routing(
    live_server: LiveServer,
) -> None:
    url = live_server.ws_url + "/ws/nowhere/"
    assert await handshake_status(url, origin="http://evil.example") == 403
    assert await handshake_status(url, origin=None) == 403, "no Origin is not a pass"
    await asyncio.sleep(0.2)  # let the worker finish its log lines
    assert "No route found" not in live_server.output()


def session_cookie_of(user: User) -> dict[str, str]:
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    return {"Cookie": f"{settings.SESSION_COOKIE_NAME}={session}"}


async def test_the_bridge_websocket_opens_only_from_the_boards_own_origin(
    live_server: LiveServer, alice: User
) -> None:
    """A page elsewhere must not ride alice's session cookie into her boards' bridge."""
    board = await sync_to_async(a_project)(name="Board", members={alice: "developer"})
    alices_cookie = await sync_to_async(session_cookie_of)(alice)
    url = f"{live_server.ws_url}/ws/boards/{board.id}/"

    for origin in ("http://evil.example", "null", None):
        assert await handshake_status(url, origin, alices_cookie) == 403, origin

    # From the board's origin the same cookie opens the bridge and it answers.
    async with websockets.connect(
        url,
        origin=live_server.url,  # type: ignore[arg-type]
        additional_headers=alices_cookie,
        open_timeout=10,
    ) as socket:
        assert json.loads(await asyncio.wait_for(socket.recv(), 10))["event"] == "context"
        await socket.send(json.dumps({"v": 1, "id": 1, "op": "get", "key": "cards"}))
        reply = json.loads(await asyncio.wait_for(socket.recv(), 10))
    assert reply == {"v": 1, "id": 1, "ok": True, "result": {"found": False}}


async def test_past_her_socket_cap_daphne_itself_tells_alice_to_try_again_later(
    live_servers: Callable[..., list[LiveServer]], alice: User
) -> None:
    """4013, an application close code: daphne's autobahn refuses to send the standard 1013
    and the socket ended in 1011 (an internal error) instead."""
    (worker,) = await sync_to_async(live_servers)(1, env={"KANBAN_SOCKETS_PER_USER": "1"})
    board = await sync_to_async(a_project)(name="Board", members={alice: "developer"})
    cookie = (await sync_to_async(session_cookie_of)(alice))["Cookie"]
    first = await open_board_socket(worker, board.id, cookie)
    with pytest.raises(websockets.ConnectionClosed) as refused:
        await open_board_socket(worker, board.id, cookie)
    assert refused.value.rcvd is not None and refused.value.rcvd.code == 4013
    await first.close()


# --- several workers -------------------------------------------------------------------------


def test_two_workers_share_one_database_and_one_survives_the_other_being_killed(
    live_servers: Callable[..., list[LiveServer]], alice: User
) -> None:
    first, second = live_servers(2)
    assert first.pid != second.pid
    assert health(first) == health(second)

    alice_at_first = Visitor(first.url)
    alice_at_first.log_in("alice", PASSWORD)
    alice_at_second = alice_at_first.for_server(second)
    assert alice_at_second.get("/")[:2] == (200, "/"), "a session made at one worker works at both"

    assert first.kill() == -signal.SIGKILL
    with pytest.raises(urllib.error.URLError):
        health(first)
    assert health(second)["status"] == "ok"
    assert alice_at_second.get("/")[:2] == (200, "/")


# --- test-process plumbing -------------------------------------------------------------------


class TestStorageIsEmptiedAfterATransactionalTest:
    """pytest-django's flush knows only model tables; conftest empties the storage tables."""

    address = value("test.live", "left-behind")

    def test_a_transactional_test_writes_a_value_and_commits_it(self) -> None:
        engine.commit([set_value(self.address, "from the previous test")])
        assert engine.get_value(self.address) is not None

    def test_the_next_transactional_test_does_not_find_it(self) -> None:
        assert engine.get_value(self.address) is None


def test_connections_opened_by_sync_to_async_are_closed_by_the_async_cleanup() -> None:
    """Async tests do their ORM work in asgiref's shared thread; its connections must be
    closed there, or PostgreSQL cannot drop the test database at the end of the run."""

    def connected() -> bool:
        return connections["default"].connection is not None

    def count_users() -> int:
        return User.objects.count()

    assert asyncio.run(sync_to_async(count_users)()) == 0
    assert asyncio.run(sync_to_async(connected)())
    close_connections_everywhere()
    assert not asyncio.run(sync_to_async(connected)())
