"""``manage.py import_project PATH``: create or update a project from its package folder."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from kanban.packages import project_import
from storage.errors import KanbanError


class Command(BaseCommand):
    help = (
        "Create or update a project, its relationship declarations and plugin files from a "
        "package folder (package.json with steamHarness.projectInfo). Never touches KV."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the package folder (holding package.json)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = project_import(path=options["path"])
        except KanbanError as error:
            problems = error.details.get("problems") or [{"path": "", "message": error.message}]
            for problem in problems:
                where = f"{problem['path']}: " if problem["path"] else ""
                self.stderr.write(f"{where}{problem['message']}")
            raise CommandError(f"{options['path']}: nothing imported") from None
        relationships = project.relationships.count()
        files = project.plugin_files.count()
        self.stdout.write(
            f"Imported {project.name} ({project.id}): {project.type}, "
            f"{relationships} relationship(s), {files} plugin file(s)"
        )
