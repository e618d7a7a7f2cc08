"""Real daphne workers for end-to-end tests.

A ``LiveServer`` is one ``python -m daphne`` subprocess serving ``kanban.asgi:application``
on 127.0.0.1 against the database this test run uses: the file-backed SQLite test
database (see ``tests/conftest.py``) or the PostgreSQL test database, plus Redis when
``REDIS_URL`` is set. Several workers started together share that database and channel
layer, which is how production runs.

Data the test writes is visible to the workers only once committed, so every test that
talks to a worker needs ``django_db(transaction=True)``; the ``live_server`` fixtures
request ``transactional_db`` themselves.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import functools
import http.client
import http.cookiejar
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from django.conf import settings
from django.db import connections
from django.db.backends.base.creation import TEST_DATABASE_PREFIX

from tests.zygote import PRELOAD_READS, WorkerProcess, Zygote, preloads_alike

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

HOST = "127.0.0.1"
# A cold worker imports Django, the apps and Twisted before it listens: a few seconds alone,
# over 20 s on a two-core machine running three test processes and Chromium (seen in CI).
# Only a worker that never comes up waits this long.
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 5.0
LOG_DIR = Path(settings.BASE_DIR) / "var" / "live"
#: How much of a worker's output goes into an error message.
LOG_TAIL = 6000
#: Daphne's access log: ``127.0.0.1:41584 - - [06/Dec/2026:05:28:43] "WSCONNECT /ws/..."``.
ACCESS_LINE = re.compile(r'\S+ - - \[[^\]]*\] "')

_running: set[LiveServer] = set()

#: Workers this process started, by how: forked by the zygote or started cold. The suite
#: prints the totals (tests/conftest.py) so that a change to the fixtures shows its cost.
STARTS: collections.Counter[str] = collections.Counter()


class LiveServerError(RuntimeError):
    pass


def database_env(alias: str = "default") -> dict[str, str]:
    """Environment that points a worker at the test database behind ``alias``.

    Refuses before the test database exists: a worker started then would serve the
    development (or production) database named in the settings.
    """
    connection = connections[alias]
    settings_dict = connection.settings_dict
    name = str(settings_dict["NAME"])
    if connection.vendor == "sqlite" and connection.is_in_memory_db():  # type: ignore[attr-defined]
        raise LiveServerError(
            "the SQLite test database is in memory and cannot be shared with a worker; "
            "tests/conftest.py makes it a file unless KANBAN_SQLITE_TEST_PATH says otherwise"
        )
    declared = (settings_dict.get("TEST") or {}).get("NAME")
    if not (name == str(declared) if declared else name.startswith(TEST_DATABASE_PREFIX)):
        raise LiveServerError(
            f"database {alias!r} is {name!r}, not the test database; live servers need a "
            "test that uses transactional_db (django_db(transaction=True))"
        )
    if connection.vendor == "sqlite":
        return {"KANBAN_SQLITE_PATH": name}
    if connection.vendor == "postgresql":
        return {"DATABASE_URL": postgres_url(settings_dict)}
    raise LiveServerError(f"live servers do not know how to share a {connection.vendor} database")


def postgres_url(settings_dict: Mapping[str, Any]) -> str:
    """The inverse of ``kanban.environment.database_from_url`` for one settings dict."""
    user = quote(str(settings_dict.get("USER") or ""), safe="")
    password = quote(str(settings_dict.get("PASSWORD") or ""), safe="")
    credentials = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = str(settings_dict.get("HOST") or "")
    port = str(settings_dict.get("PORT") or "")
    location = f"{host}:{port}" if port else host
    name = quote(str(settings_dict["NAME"]), safe="")
    options = {k: v for k, v in (settings_dict.get("OPTIONS") or {}).items() if isinstance(v, str)}
    query = f"?{urlencode(options)}" if options else ""
    return f"postgres://{credentials}{location}/{name}{query}"


#: A worker's settings for a test whose many clients share one account.
ONE_ACCOUNT_MANY_CLIENTS: dict[str, str] = {
    "KANBAN_SOCKETS_PER_USER": "100000",
    "KANBAN_BRIDGE_USER_RATE": "1e9",
    "KANBAN_BRIDGE_USER_BURST": "1e9",
}


def worker_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment, re-pointed at the test database.

    ``REDIS_URL`` and ``KANBAN_REDIS_PREFIX`` pass through unchanged so that workers and
    the test process share one channel layer.
    """
    env = dict(os.environ)
    env.pop("DATABASE_URL", None)
    env.pop("KANBAN_SQLITE_PATH", None)
    env.update(database_env())
    env["DJANGO_SETTINGS_MODULE"] = "kanban.settings"
    env["PYTHONUNBUFFERED"] = "1"
    # The test process may be inside Playwright's sync loop; that is no reason for a worker.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    # Load tests (revocation, Redis outage, reconnect storms) play many people with one
    # account; one person's share of a worker is tested in process
    # (tests/kanban/bridge/test_consumer.py).
    env.update(ONE_ACCOUNT_MANY_CLIENTS)
    if (extra or {}).get("KANBAN_MODE") != "production":  # which refuses it
        env["KANBAN_FAST_PASSWORD_HASHING"] = "1"  # as tests/conftest.py hashes
    if extra:
        env.update(extra)
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


_zygote: Zygote | None = None


def _zygote_for(env: Mapping[str, str]) -> Zygote | None:
    """The zygote that forks a worker of ``env``, started with the first worker's; a worker
    whose environment changes what the zygote imported, or that asks for a process of its
    own (``KANBAN_LIVE_NO_ZYGOTE``), starts the slow way, by itself."""
    global _zygote
    if "KANBAN_LIVE_NO_ZYGOTE" in env:
        return None
    if _zygote is not None and not _zygote.alive:
        _zygote = None
    if _zygote is None:
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        # Without what a first worker's own settings would make every later one start cold.
        common = {key: value for key, value in env.items() if key not in PRELOAD_READS}
        _zygote = Zygote(common, Path(settings.BASE_DIR), LOG_DIR / f"zygote-{os.getpid()}.log")
    return _zygote if preloads_alike(_zygote.env, env) else None


class LiveServer:
    """One daphne worker process. Start with ``start_live_servers`` (or ``LiveServer.start``).

    ``url``/``ws_url`` have no trailing slash: ``live.url + "/healthz"``.
    """

    def __init__(
        self, process: subprocess.Popen[bytes] | WorkerProcess, port: int, log_path: Path
    ) -> None:
        self.process = process
        self.port = port
        self.log_path = log_path

    @classmethod
    def start(
        cls, *, env: Mapping[str, str] | None = None, timeout: float = READY_TIMEOUT
    ) -> LiveServer:
        (server,) = start_live_servers(1, env=env, timeout=timeout)
        return server

    @classmethod
    def spawn(cls, env: Mapping[str, str]) -> LiveServer:
        """Launch without waiting; ``wait_until_ready`` finishes the start."""
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        port = free_port()
        # A value may name the worker's own port before it is chosen (a plugin origin).
        env = {key: value.replace("{live_port}", str(port)) for key, value in env.items()}
        fd, name = tempfile.mkstemp(prefix=f"daphne-{port}-", suffix=".log", dir=LOG_DIR)
        argv = ["-b", HOST, "-p", str(port), "kanban.asgi:application"]
        zygote = _zygote_for(env)
        process: subprocess.Popen[bytes] | WorkerProcess
        STARTS["forked" if zygote is not None else "cold"] += 1
        if zygote is not None:
            os.close(fd)
            process = zygote.fork(argv, Path(name), env)
        else:
            with os.fdopen(fd, "wb") as log:
                process = subprocess.Popen(
                    [sys.executable, "-m", "kanban.daphne", *argv],
                    cwd=settings.BASE_DIR,
                    env=dict(env),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
        server = cls(process, port, Path(name))
        _running.add(server)
        return server

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def output(self, tail: int = LOG_TAIL, *, access_log: bool = True) -> str:
        """The last ``tail`` characters the worker wrote to stdout and stderr; without
        ``access_log``, less daphne's line a request, which buries a traceback under a
        test's hundred sockets."""
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        if not access_log:
            text = "".join(
                line for line in text.splitlines(keepends=True) if not ACCESS_LINE.match(line)
            )
        return text[-tail:]

    def wait_until_ready(self, timeout: float = READY_TIMEOUT) -> None:
        """Block until ``/healthz`` answers ok on the test database's vendor."""
        deadline = time.monotonic() + timeout
        expected = connections["default"].vendor
        last_error = "no answer yet"
        while time.monotonic() < deadline:
            if not self.running:
                self._fail(f"exited with code {self.process.returncode} before it was ready")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2) as response:
                    health = json.load(response)
            except (OSError, ValueError) as error:
                last_error = str(error)
                time.sleep(0.05)
                continue
            # /healthz also says how Redis is (kanban/web/health.py); that is no readiness.
            if (health.get("status"), health.get("database")) != ("ok", expected):
                self._fail(f"answered /healthz with {health!r}, expected the {expected} test DB")
            return
        self._fail(f"did not answer /healthz within {timeout:.0f} s ({last_error})")

    def _fail(self, why: str) -> None:
        output = self.output()
        self.kill()
        raise LiveServerError(f"daphne worker on port {self.port} {why}; its output:\n{output}")

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM, then SIGKILL after ``timeout``; always reaps. Returns the exit code."""
        if self.running:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self._reap()

    def kill(self) -> int:
        """SIGKILL right away, as a crash would. Returns the exit code (``-SIGKILL``)."""
        if self.running:
            self.process.kill()
        return self._reap()

    def _reap(self) -> int:
        code = self.process.wait()
        _running.discard(self)
        return code

    def remove_log(self) -> None:
        self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> LiveServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else f"exited {self.process.returncode}"
        return f"<LiveServer {self.url} pid={self.pid} {state}>"


async def open_board_socket(
    server: LiveServer, project_id: Any, cookie: str, **options: Any
) -> ClientConnection:
    """A real bridge socket to ``server``, as a browser of that origin opens it, past the
    context event every socket opens with. ``options`` go to websockets' ``connect``."""
    from websockets.asyncio.client import connect

    socket = await connect(
        f"{server.ws_url}/ws/boards/{project_id}/",
        additional_headers=[("Cookie", cookie)],
        origin=server.url,  # type: ignore[arg-type]
        **options,
    )
    opening = json.loads(await socket.recv())
    assert opening.get("event") == "context", opening
    return socket


def start_live_servers(
    count: int = 1, *, env: Mapping[str, str] | None = None, timeout: float = READY_TIMEOUT
) -> list[LiveServer]:
    """Start ``count`` workers on the test database; return when every one is ready.

    They boot in parallel. If one fails, all are stopped and the error carries its output.
    A worker that lost the race for its port is replaced once.
    """
    full_env = worker_env(env)
    servers = [LiveServer.spawn(full_env) for _ in range(count)]
    try:
        for index, server in enumerate(servers):
            try:
                server.wait_until_ready(timeout)
            except LiveServerError:
                if "Address already in use" not in server.output():
                    raise
                server.remove_log()
                servers[index] = LiveServer.spawn(full_env)
                servers[index].wait_until_ready(timeout)
    except BaseException:
        for server in servers:
            server.stop()
            server.remove_log()  # what mattered is in the error already
        raise
    return servers


@contextlib.contextmanager
def live_servers(
    count: int = 1, *, env: Mapping[str, str] | None = None
) -> Iterator[list[LiveServer]]:
    servers = start_live_servers(count, env=env)
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()
            server.remove_log()


@atexit.register
def _kill_leftovers() -> None:
    """Whatever a crashed or interrupted run left behind dies with it."""
    for server in list(_running):
        server.kill()
    if _zygote is not None:
        _zygote.close()


class _FromAddress(urllib.request.HTTPHandler):
    """Connects from one loopback address of the many Linux answers on (127.0.0.0/8)."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source

    def http_open(self, req: urllib.request.Request) -> Any:
        connection = functools.partial(http.client.HTTPConnection, source_address=(self.source, 0))
        return self.do_open(connection, req)


class Visitor:
    """A cookie-keeping HTTP client, so a test can act as a person against a worker;
    ``source`` is the loopback address it connects from (another person's machine)."""

    def __init__(self, base_url: str, *, source: str | None = None) -> None:
        self.base_url = base_url
        self.cookies = http.cookiejar.CookieJar()
        handlers: list[Any] = [urllib.request.HTTPCookieProcessor(self.cookies)]
        if source is not None:
            handlers.append(_FromAddress(source))
        self.opener = urllib.request.build_opener(*handlers)

    def get(self, path: str) -> tuple[int, str, str]:
        """(status, final path after redirects, body)."""
        with self.opener.open(self.base_url + path, timeout=10) as response:
            final = urllib.parse.urlsplit(response.url)
            path_and_query = final.path + (f"?{final.query}" if final.query else "")
            return response.status, path_and_query, response.read().decode()

    def log_in(self, username: str, password: str) -> str:
        """Submit the login form; return the path the browser would land on."""
        return self.submit_login(username, password)[0]

    def submit_login(self, username: str, password: str) -> tuple[str, str]:
        """Submit the login form: (the path the browser would land on, its page)."""
        self.get("/accounts/login/")
        form = {
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": self.cookie(settings.CSRF_COOKIE_NAME),
        }
        request = urllib.request.Request(
            self.base_url + "/accounts/login/",
            data=urllib.parse.urlencode(form).encode(),
            headers={"Referer": self.base_url + "/accounts/login/"},
        )
        with self.opener.open(request, timeout=10) as response:
            return str(urllib.parse.urlsplit(response.url).path), response.read().decode()

    def cookie(self, name: str) -> str:
        return next(cookie.value or "" for cookie in self.cookies if cookie.name == name)

    def for_server(self, other: LiveServer) -> Visitor:
        """The same person, with the same cookies, talking to another worker."""
        twin = Visitor(other.url)
        for cookie in self.cookies:
            twin.cookies.set_cookie(cookie)
        return twin
