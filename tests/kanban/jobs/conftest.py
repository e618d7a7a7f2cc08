"""Jobs run the Trello import service of kanban/imports/trello.py; an export as Trello
writes one, small; a real database worker, run by the test in its own process; and a real
SMTP server process for the mail the worker sends."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django_tasks_db.management.commands.db_worker import Worker

from kanban.jobs import tasks
from tests.kanban.jobs.smtp import SmtpServer


def trello_export(*, name: str = "Roadmap", cards: int = 3) -> bytes:
    """A Trello board export in its published shape, with ``cards`` cards in one list."""
    return json.dumps(
        {
            "id": "5f1a0c0c0c0c0c0c0c0c0c01",
            "name": name,
            "desc": "",
            "closed": False,
            "prefs": {"background": "blue"},
            "labels": [{"id": "5f1a0c0c0c0c0c0c0c0c0c02", "name": "Bug", "color": "red"}],
            "lists": [
                {"id": "5f1a0c0c0c0c0c0c0c0c0c03", "name": "To do", "pos": 16384, "closed": False}
            ],
            "cards": [
                {
                    "id": f"5f1a0c0c0c0c0c0c0c0d{number:04x}",
                    "name": f"Card {number}",
                    "desc": "",
                    "idList": "5f1a0c0c0c0c0c0c0c0c0c03",
                    "pos": 16384 * (number + 1),
                    "closed": False,
                    "due": None,
                    "start": None,
                    "dueComplete": False,
                    "idLabels": [],
                    "idMembers": [],
                    "idChecklists": [],
                    "attachments": [],
                }
                for number in range(cards)
            ],
            "checklists": [],
            "members": [],
            "memberships": [],
            "customFields": [],
            "actions": [],
            "pluginData": [],
        }
    ).encode()


def run_worker() -> None:
    """django-tasks-db's own worker, as ``manage.py db_worker --batch`` runs it: every task
    that is ready, then it stops."""
    Worker(
        queue_names=["default"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="test-worker",
        excluded_queue_names=[],
    ).run()


@pytest.fixture
def no_retry_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    """A retry is ready at once, so one batch of the worker runs it too."""
    monkeypatch.setattr(tasks, "RETRY_DELAY", tasks.RETRY_DELAY * 0)


def count_of(report: dict[str, Any], what: str) -> int:
    return int(report["counts"][what])


@pytest.fixture
def smtp(tmp_path: Path, settings: Any) -> Iterator[SmtpServer]:
    """A real SMTP server process on a free port, and this process's mail sent as the
    deployment sends it: queued by the request, delivered over SMTP by the worker (pytest-
    django had set the in-memory backend)."""
    server = SmtpServer(tmp_path).start()
    settings.EMAIL_BACKEND = "kanban.jobs.email.QueuedEmailBackend"
    settings.KANBAN_EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 5
    settings.KANBAN_EMAIL_ENABLED = True
    try:
        yield server
    finally:
        server.stop()
