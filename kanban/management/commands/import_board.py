"""Import a board archive (manage.py export_board, or a board's Export button) as a Board the
owner owns, and report what was imported. Importing an archive of the same board again updates
the board it made. Members with a username here are offered the board, never added."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from kanban.imports.board_archive import archive_bytes_limit, board_archive_import
from kanban.management.base import KanbanCommand
from kanban.management.imports import read_bounded, report_opening
from kanban.management.owners import add_owner_argument, resolve_owner
from storage.errors import KanbanError


class Command(KanbanCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the board archive")
        add_owner_argument(parser, what="the new board")
        parser.add_argument(
            "--dry-run", action="store_true", help="report what the import would do"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        owner = resolve_owner(options["owner"])
        if owner is None:
            raise CommandError("who owns the board? give --owner USERNAME")
        path = Path(options["file"])
        data = read_bounded(path, archive_bytes_limit())
        try:
            report = board_archive_import(actor=owner, data=data, dry_run=options["dry_run"])
        except KanbanError as error:
            self.stderr.write(f"{path}: {error.message}")
            raise CommandError(f"{path}: nothing imported") from None
        for line in report_opening(report):
            self.stdout.write(line)
        if report.offered:
            self.stdout.write("Offered the board: " + ", ".join(report.offered))
        if report.not_here:
            self.stdout.write("No account here: " + ", ".join(report.not_here))
