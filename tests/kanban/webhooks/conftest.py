"""A real webhook receiver (an ``http.server`` on 127.0.0.1 in a thread of the test, so the
operator's setting that allows private addresses is on), and django-tasks-db's own worker
running in another thread, as ``manage.py db_worker`` runs it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.db import connections
from django_tasks_db.management.commands.db_worker import Worker


@dataclass
class Received:
    at: float
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str = ""
    received: list[Received] = field(default_factory=list)
    #: What it answers, in turn; 200 once they run out.
    answers: list[int] = field(default_factory=list)
    #: Every request's answer, when set (a receiver that keeps failing).
    always: int | None = None
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def answer(self) -> int:
        if self.always is not None:
            return self.always
        return self.answers.pop(0) if self.answers else 200

    def wait_for(self, count: int, timeout: float) -> list[Received]:
        """The first ``count`` requests, waiting at most ``timeout`` seconds for them."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, timeout=timeout)
            return list(self.received)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status = state.answer()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"thanks" if status < 300 else b"receiver is broken")
            with state.arrived:
                state.received.append(
                    Received(time.monotonic(), self.path, dict(self.headers.items()), body)
                )
                state.arrived.notify_all()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hook?from=kanban"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def allow_private(settings: Any) -> None:
    settings.KANBAN_WEBHOOKS_ALLOW_PRIVATE = True


@pytest.fixture
def fast_retries(settings: Any) -> None:
    settings.KANBAN_WEBHOOK_BACKOFF_SECONDS = 0.2
    settings.KANBAN_WEBHOOK_ATTEMPTS = 4


@pytest.fixture
def worker(transactional_db: None) -> Iterator[None]:
    """The database worker, polling every 50 ms until the test ends."""
    running = Worker(
        queue_names=["default"],
        interval=0.05,
        batch=False,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="webhook-test-worker",
        excluded_queue_names=[],
    )

    def run() -> None:
        try:
            running.run()
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, name="db-worker", daemon=True)
    thread.start()
    yield
    running.running = False
    thread.join(timeout=10)
