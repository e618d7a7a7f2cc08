"""Create an API token for USERNAME and print it (the token alone, last, for scripts). --project
scopes it to a project and its aliases (what an MCP client needs; given again, to several: REST
only), --scope read makes it read-only, --scope mcp usable at the MCP endpoint only, --expires
1h ends it after that long. People make their own on /account/tokens."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from kanban.accounts.tokens import check_duration, token_create
from kanban.management.base import KanbanCommand
from kanban.models import TokenScope


class Command(KanbanCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--name",
            default="",
            help="the agent's name (triage-bot): its MCP writes carry it beside USERNAME",
        )
        parser.add_argument(
            "--project",
            type=UUID,
            action="append",
            default=[],
            help="a project it reaches (repeat for several; none: all of USERNAME's)",
        )
        parser.add_argument("--scope", default="write", choices=TokenScope.values)
        parser.add_argument("--expires", help="a lifetime: 30m, 1h, 7d (default: none)")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None or not user.is_active:
            raise CommandError(f"no active user named {options['username']!r}")
        lifetime = None if options["expires"] is None else check_duration(options["expires"])
        _, plaintext = token_create(
            user=user,
            name=options["name"],
            project_id=options["project"][0] if options["project"] else None,
            more_project_ids=options["project"][1:],
            scope=options["scope"],
            lifetime=lifetime,
        )
        self.stdout.write(plaintext)
