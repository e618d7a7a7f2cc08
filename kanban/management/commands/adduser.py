"""Create an active user without a prompt. With --password-stdin the password is the first line of
standard input; without it the user gets no usable password."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import CommandError, CommandParser

from kanban.accounts.users import user_create
from kanban.management.base import KanbanCommand


class Command(KanbanCommand):
    # Tests (and other callers of call_command) may hand over their own stdin.
    stealth_options = ("stdin",)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--password-stdin", action="store_true")
        parser.add_argument("--staff", action="store_true", help="may sign in to the admin")
        parser.add_argument("--superuser", action="store_true", help="owner of every project")

    def handle(self, *args: Any, **options: Any) -> None:
        password: str | None = None
        if options["password_stdin"]:
            stdin = options.get("stdin") or sys.stdin
            password = stdin.readline().rstrip("\r\n")
            if not password:
                raise CommandError("no password on standard input")
        user = user_create(
            username=options["username"],
            password=password,
            is_staff=options["staff"],
            is_superuser=options["superuser"],
        )
        kind = "superuser" if options["superuser"] else "staff user" if options["staff"] else "user"
        self.stdout.write(f"Created {kind} {user.get_username()}")
