from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from kanban.accounts.tokens import token_create


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print it (the token alone, for scripts)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="a label shown in the admin")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None or not user.is_active:
            raise CommandError(f"no active user named {options['username']!r}")
        _, plaintext = token_create(user=user, name=options["name"])
        self.stdout.write(plaintext)
