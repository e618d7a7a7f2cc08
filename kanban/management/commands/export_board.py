"""Write a board archive (docs/board-archive.md): the project's package and plugin files, every
value of its KV and PersistentValue (knowledge documents included), its members by username;
with --history, each value's kept versions too. manage.py import_board reads it here or
elsewhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from kanban.imports.board_export import board_archive_of
from kanban.management.base import KanbanCommand, add_project_id


class Command(KanbanCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        add_project_id(parser)
        parser.add_argument("file", help="the archive to write (a .zip)")
        parser.add_argument(
            "--history", action="store_true", help="include each value's kept versions"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        data = board_archive_of(project_id=options["project_id"], history=options["history"])
        path = Path(options["file"])
        partial = path.with_name(path.name + ".partial")
        try:
            partial.write_bytes(data)
            partial.replace(path)
        except OSError as error:
            raise CommandError(f"{path}: {error.strerror}") from None
        self.stdout.write(f"Exported {options['project_id']} to {path} ({len(data)} bytes)")
