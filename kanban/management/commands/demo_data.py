from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from kanban.demo import demo_load
from storage.errors import KanbanError


class Command(BaseCommand):
    help = (
        "Load development demo data (users alice, bob, carol; Board and Inventory) into an "
        "empty database; a database with users is left alone."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            logins = demo_load()
        except KanbanError as error:
            raise CommandError(error.message) from None
        if not logins:
            return
        self.stdout.write("Demo data loaded. Development logins (shown once):")
        for login in logins:
            self.stdout.write(f"  {login.username:6} {login.password:24} {login.role}")
