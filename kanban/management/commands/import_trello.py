"""``manage.py import_trello FILE --owner USERNAME [--dry-run] [--map NAME=USERNAME ...]``:
a Trello board export as a Board, and the report of what was imported and skipped."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from kanban.imports.trello import TrelloReport, trello_import
from kanban.imports.trello_shape import import_bytes_limit
from kanban.management.owners import add_owner_argument, resolve_owner
from storage.errors import KanbanError

#: Skipped things listed one by one up to this many per kind; past it, counted.
SHOWN_PER_KIND = 10


class Command(BaseCommand):
    help = (
        "Import a Trello board export (Trello: Menu, Print and export, Export as JSON) as a "
        "Board the owner owns: lists in order (closed ones archived), cards with their "
        "labels, members, due dates, checklists, comments (original authors and dates), "
        "attachments as links, custom fields and plugin data. Importing the same export "
        "again updates the board it made. Prints what was imported and what was skipped, "
        "and why; a refused file writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the export's JSON file")
        add_owner_argument(
            parser,
            what="the new board",
            more="; a board imported before is updated only by one of its owners",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="report what the import would do, writing nothing",
        )
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="TRELLO=USERNAME",
            help="a Trello member (id or Trello username) as a user here; repeat for more. "
            "Members whose Trello username is a username here need none; the others are "
            "kept by name",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        owner = resolve_owner(options["owner"])
        if owner is None:
            raise CommandError("who owns the board? give --owner USERNAME")
        mapping = {}
        for pair in options["map"]:
            trello, _, username = pair.partition("=")
            if not trello.strip() or not username.strip():
                raise CommandError(f"--map {pair}: give it as TRELLO=USERNAME")
            mapping[trello.strip()] = username.strip()
        path = Path(options["file"])
        data = self.read(path)
        try:
            report = trello_import(
                actor=owner, data=data, dry_run=options["dry_run"], mapping=mapping
            )
        except KanbanError as error:
            self.stderr.write(f"{path}: {error.message}")
            raise CommandError(f"{path}: nothing imported") from None
        self.print_report(report)

    def read(self, path: Path) -> bytes:
        limit = import_bytes_limit()
        try:
            with path.open("rb") as file:
                # One byte past the limit is enough to refuse it, however large it is.
                return file.read(limit + 1)
        except OSError as error:
            raise CommandError(f"{path}: {error.strerror}") from None

    def print_report(self, report: TrelloReport) -> None:
        if report.dry_run:
            what = "a new board" if report.created else f"board {report.project_id}"
            self.stdout.write(f"Dry run: nothing written. {report.board_name} would go to {what}:")
        else:
            how = "as a new board" if report.created else "again, updating its board"
            self.stdout.write(f"Imported {report.board_name} {how} ({report.project_id}):")
        for name, count in report.counts.items():
            self.stdout.write(f"  {count} {name}")
        for kept in report.kept:
            self.stdout.write(f"Kept, not shown: {kept['what']} ({kept['where']}): {kept['why']}")
        shown: Counter[str] = Counter()
        for skipped in report.skipped:
            shown[skipped["what"]] += 1
            if shown[skipped["what"]] <= SHOWN_PER_KIND:
                self.stdout.write(f"Skipped {skipped['what']} {skipped['id']}: {skipped['why']}")
        for what, count in shown.items():
            if count > SHOWN_PER_KIND:
                self.stdout.write(f"Skipped {count - SHOWN_PER_KIND} more of: {what}")
