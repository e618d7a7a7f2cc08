from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from storage import dump
from storage.errors import KanbanError


class Command(BaseCommand):
    help = (
        "Restore a storage_dump file exactly (all or nothing): the storage engine's data "
        "only; manage.py restore loads a whole deployment's backup."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument(
            "--replace", action="store_true", help="clear a non-empty store before loading"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with open(options["file"], encoding="utf-8") as source:
                count = dump.load(source, replace=options["replace"])
        except KanbanError as exc:
            raise CommandError(f"{exc.code}: {exc.message}; nothing was loaded") from exc
        except OSError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"loaded {count} records")
