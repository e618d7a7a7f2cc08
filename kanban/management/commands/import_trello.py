"""Import a Trello board export (Trello: Menu, Print and export, Export as JSON) as a Board the
owner owns: lists in order (closed ones archived), cards with their labels, members, due dates,
checklists, comments (original authors and dates), attachments as links, custom fields and
plugin data. Importing the same export again updates the board it made. Prints what was
imported and what was skipped, and why; a refused file writes nothing."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from kanban.imports.trello import TrelloReport, trello_import
from kanban.imports.trello_shape import import_bytes_limit
from kanban.management.base import KanbanCommand
from kanban.management.imports import read_bounded, report_opening
from kanban.management.owners import add_owner_argument, resolve_owner
from storage.errors import KanbanError

#: Skipped things listed one by one up to this many per kind; past it, counted.
SHOWN_PER_KIND = 10


class Command(KanbanCommand):
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
        data = read_bounded(path, import_bytes_limit())
        try:
            report = trello_import(
                actor=owner, data=data, dry_run=options["dry_run"], mapping=mapping
            )
        except KanbanError as error:
            self.stderr.write(f"{path}: {error.message}")
            raise CommandError(f"{path}: nothing imported") from None
        self.print_report(report)

    def print_report(self, report: TrelloReport) -> None:
        for line in report_opening(report):
            self.stdout.write(line)
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
