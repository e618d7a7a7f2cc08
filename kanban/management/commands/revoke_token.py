"""Revoke the API token TOKEN (its plaintext): every use of it fails from now on."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from kanban.accounts.tokens import token_revoke_plaintext
from kanban.management.base import KanbanCommand


class Command(KanbanCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("token")

    def handle(self, *args: Any, **options: Any) -> None:
        if not token_revoke_plaintext(plaintext=options["token"]):
            raise CommandError("no live token matches")
        self.stdout.write("Revoked.")
