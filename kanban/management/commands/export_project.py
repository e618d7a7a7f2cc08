"""``manage.py export_project PROJECT_ID PATH``: write a project's package folder."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError, CommandParser

from kanban.projects.exports import project_export
from storage.errors import KanbanError


class Command(BaseCommand):
    help = (
        "Write a project's package (package.json and plugin files) to a folder that is "
        "missing or empty. Never copies KV."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project_id", type=UUID, help="the project's UUID")
        parser.add_argument("path", help="the folder to write")
        parser.add_argument(
            "--force",
            action="store_true",
            help="write into a non-empty folder, overwriting the package's files",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            folder = project_export(
                project_id=options["project_id"], path=options["path"], overwrite=options["force"]
            )
        except KanbanError as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"Exported {options['project_id']} to {folder}")
