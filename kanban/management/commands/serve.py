"""Migrate, load demo data on an empty development database, then serve with daphne."""

from __future__ import annotations

import os
import sys
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Apply migrations, seed demo data when empty (development only), and run daphne."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("KANBAN_HOST", "127.0.0.1"))
        parser.add_argument("--port", default=os.environ.get("KANBAN_PORT", "8000"))
        parser.add_argument("--no-migrate", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["no_migrate"]:
            call_command("migrate", interactive=False, verbosity=0)
        if settings.KANBAN_DEMO_DATA:
            call_command("demo_data")
        host, port = options["host"], str(options["port"])
        self.stdout.write(f"Serving on http://{host}:{port}/ (Ctrl+C to stop)")
        sys.stdout.flush()
        # exec hands the process to daphne so signals and exit codes are daphne's own. Not
        # daphne's proxy headers: it would believe the first X-Forwarded-For entry, which a
        # client writes (kanban/accounts/client_address.py reads it from named proxies only).
        argv = [sys.executable, "-m", "kanban.daphne", "-b", host, "-p", port]
        argv.append("kanban.asgi:application")
        os.execv(sys.executable, argv)  # noqa: S606
