"""Load development demo data (users alice, bob, carol; Board and Inventory) into an empty
database; a database with users is left alone."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from kanban.data.demo import demo_board_fill, demo_load
from kanban.management.base import KanbanCommand


class Command(KanbanCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--board-cards",
            type=int,
            metavar="N",
            help="give the demo Board N cards in all, spread over its columns (a big board)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        logins = demo_load()
        if options["board_cards"] is not None:
            if options["board_cards"] < 0:
                raise CommandError("--board-cards needs a number of cards, 0 or more")
            added = demo_board_fill(cards=options["board_cards"])
            self.stdout.write(f"The demo Board has {added} more card(s).")
        if not logins:
            return
        self.stdout.write("Demo data loaded. Development logins (shown once):")
        for login in logins:
            self.stdout.write(f"  {login.username:6} {login.password:24} {login.role}")
