"""Write a project's package (package.json and plugin files) to a folder that is missing or empty.
Never copies KV."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from kanban.management.base import KanbanCommand, add_project_id
from kanban.projects.exports import project_export


class Command(KanbanCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        add_project_id(parser)
        parser.add_argument("path", help="the folder to write")
        parser.add_argument(
            "--force",
            action="store_true",
            help="write into a non-empty folder, overwriting the package's files",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        folder = project_export(
            project_id=options["project_id"], path=options["path"], overwrite=options["force"]
        )
        self.stdout.write(f"Exported {options['project_id']} to {folder}")
