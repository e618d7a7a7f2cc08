"""Apply migrations, seed demo data when empty (development only), and run daphne."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandParser

from kanban.management.base import KanbanCommand


class Command(KanbanCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("KANBAN_HOST", "127.0.0.1"))
        parser.add_argument("--port", default=os.environ.get("KANBAN_PORT", "8000"))
        parser.add_argument("--no-migrate", action="store_true")
        parser.add_argument(
            "--no-worker",
            action="store_true",
            help="start no background-jobs worker (run `manage.py db_worker` yourself)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["no_migrate"]:
            call_command("migrate", interactive=False, verbosity=0)
        if settings.KANBAN_DEMO_DATA:
            call_command("demo_data")
        if not options["no_worker"]:
            start_jobs_worker()
        host, port = options["host"], str(options["port"])
        self.stdout.write(f"Serving on http://{host}:{port}/ (Ctrl+C to stop)")
        sys.stdout.flush()
        # exec hands the process to daphne so signals and exit codes are daphne's own. Not
        # daphne's proxy headers: it would believe the first X-Forwarded-For entry, which a
        # client writes (kanban/quotas/client_address.py reads it from named proxies only).
        argv = [sys.executable, "-m", "kanban.daphne", "-b", host, "-p", port]
        argv.append("kanban.asgi:application")
        os.execv(sys.executable, argv)  # noqa: S606


def start_jobs_worker() -> subprocess.Popen[bytes]:
    """The background jobs' worker (kanban/jobs/worker.py), a child reading a pipe whose
    write end this process keeps, inheritable, through its exec into daphne: the worker
    stops when daphne ends, and serve leaves nothing running behind it."""
    read_end, write_end = os.pipe()
    os.set_inheritable(write_end, True)
    worker = subprocess.Popen(
        [sys.executable, "-m", "kanban.jobs.worker"], stdin=read_end, close_fds=True
    )
    os.close(read_end)
    return worker
