"""The bench's own world: a PostgreSQL database and Redis prefix of its own, the schema
made by ``manage.py migrate``, a scene of people and projects, and daphne workers.

Nothing here imports pytest or the test helpers; ``tests/live.py`` was the model.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

from bench.ports import HOST, Listening, free_port

ROOT = Path(__file__).resolve().parent.parent
LOG_DIR = ROOT / "var" / "bench"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/kanban_bench"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def configure_environment() -> dict[str, str]:
    """Point this process (and every child) at the bench database and Redis prefix.

    The bridge's per-socket rate limit is lifted: the bench measures throughput, and the
    limit would otherwise be what it measured.
    """
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    os.environ.setdefault("REDIS_URL", DEFAULT_REDIS_URL)
    os.environ.setdefault("KANBAN_REDIS_PREFIX", "bench")
    os.environ["DJANGO_SETTINGS_MODULE"] = "kanban.settings"
    os.environ["KANBAN_BRIDGE_RATE"] = "1000000000"
    os.environ["KANBAN_BRIDGE_BURST"] = "1000000000"
    # The viewers of a scenario are one account's many clients.
    os.environ["KANBAN_SOCKETS_PER_USER"] = "1000000"
    os.environ["KANBAN_BRIDGE_USER_RATE"] = "1000000000"
    os.environ["KANBAN_BRIDGE_USER_BURST"] = "1000000000"
    os.environ["KANBAN_DEMO_DATA"] = "0"
    # Workers run as in production: DEBUG would wrap every query in a logging cursor.
    os.environ["DEBUG"] = "0"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["PYTHONUNBUFFERED"] = "1"
    return dict(os.environ)


def raise_open_files(wanted: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(max(soft, wanted), hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target


def create_database() -> None:
    """Create the bench database when it is missing, so a fresh machine needs no manual
    step (connecting through the server's ``postgres`` maintenance database)."""
    import psycopg
    from psycopg import sql

    url = os.environ["DATABASE_URL"]
    name = urllib.parse.urlsplit(url).path.lstrip("/")
    admin = urllib.parse.urlsplit(url)._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        print(f"bench: created database {name}", flush=True)


def migrate() -> None:
    create_database()
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
        cwd=ROOT,
        check=True,
    )


def setup_django() -> None:
    import django

    django.setup()


def new_card(card_id: str, *, title: str, rank: str, column: str = "todo") -> dict[str, Any]:
    """A card as the benches add it to the Board: every field present, none filled in."""
    return {
        "id": card_id,
        "title": title,
        "description": "",
        "assignee": "",
        "labels": [],
        "due": None,
        "column": column,
        "rank": rank,
    }


@dataclass(frozen=True)
class Scene:
    """alice owns ``board`` (a kanban project); ``cookie`` is her session."""

    board_id: UUID
    user_id: int
    cookie: str


def make_scene() -> Scene:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    from kanban.access.memberships import membership_set
    from kanban.projects.lifecycle import project_create

    suffix = os.urandom(4).hex()
    alice = get_user_model().objects.create_user(f"alice-{suffix}")
    board = project_create(name=f"Bench board {suffix}")
    membership_set(user=alice, project=board, role="owner")
    client = Client()
    client.force_login(alice)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    return Scene(board_id=board.id, user_id=alice.pk, cookie=cookie)


class Server(Listening):
    """One child process serving on ``port``: a daphne worker or a bare baseline server."""

    def __init__(self, argv: list[str], *, name: str, env: Mapping[str, str] | None = None):
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.name = name
        fd, log = tempfile.mkstemp(prefix=f"{name}-{self.port}-", suffix=".log", dir=LOG_DIR)
        self.log_path = Path(log)
        with os.fdopen(fd, "wb") as out:
            self.process = subprocess.Popen(
                [a.replace("{port}", str(self.port)) for a in argv],
                cwd=ROOT,
                env=dict(env or os.environ),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait_for_port(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited early:\n{self.output()}")
            try:
                with socket.create_connection((HOST, self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not listen within {timeout:.0f} s:\n{self.output()}")

    def output(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except FileNotFoundError:
            return ""

    def said(self) -> list[str]:
        """The log without its access lines (one per socket), which would hide the rest."""
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return []
        return [line for line in text.splitlines() if " - - [" not in line]

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def profile(self, directory: Path) -> None:
        """Sample this process with py-spy until it stops (``KANBAN_BENCH_PROFILE``)."""
        directory.mkdir(parents=True, exist_ok=True)
        out = directory / f"{self.name}-{self.port}.txt"
        self.profiler: subprocess.Popen[bytes] | None = subprocess.Popen(
            [
                shutil.which("py-spy", path=str(Path(sys.executable).parent)) or "py-spy",
                "record",
                "--pid",
                str(self.pid),
                "--rate",
                "250",
                "--format",
                "raw",
                "--output",
                str(out),
                "--nonblocking",
                # Only the thread holding the GIL: on a busy machine a thread waiting for it
                # (after a socket call) would otherwise count as busy where it stands.
                *(["--gil"] if os.environ.get("KANBAN_BENCH_PROFILE_GIL") else []),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        profiler = getattr(self, "profiler", None)
        if profiler is not None and profiler.poll() is None:
            profiler.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
            try:
                profiler.wait(10)
            except subprocess.TimeoutExpired:
                profiler.kill()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: Any) -> None:
        if kind is not None:
            # What the worker said is the first thing to read when a scenario fails.
            print(f"--- {self.name} said ---", *self.said()[-60:], sep="\n", file=sys.stderr)
        self.stop()


def daphne() -> Server:
    """One bridge worker on the bench database and Redis layer, ready when /healthz is."""
    server = Server(
        [
            *(sys.executable, "-m", "kanban.daphne"),
            *("-b", HOST, "-p", "{port}", "kanban.asgi:application"),
        ],
        name="daphne",
    )
    try:
        server.wait_for_port()
        with urllib.request.urlopen(server.url + "/healthz", timeout=10) as response:  # noqa: S310
            health = json.load(response)
        if health.get("status") != "ok":
            raise RuntimeError(f"daphne /healthz answered {health!r}")
        if os.environ.get("KANBAN_BENCH_PROFILE"):
            server.profile(Path(os.environ["KANBAN_BENCH_PROFILE"]))
    except BaseException:
        server.stop()
        raise
    return server


def baseline(kind: str, *args: str) -> Server:
    """A bare ``websockets`` server from ``bench.baselines``."""
    server = Server(
        [sys.executable, "-m", "bench.baselines", kind, "{port}", *args], name=f"bare-{kind}"
    )
    try:
        server.wait_for_port()
    except BaseException:
        server.stop()
        raise
    return server
