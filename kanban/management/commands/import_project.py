"""``manage.py import_project PATH [--watch]``: create or update a project from its package
folder; with ``--watch``, again after every change to its files."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from kanban.models import Project
from kanban.projects.packages import project_import
from kanban.projects.plugin_workflow import WATCH_INTERVAL, project_import_watch
from storage.errors import ErrorCode, KanbanError


class Command(BaseCommand):
    help = (
        "Create or update a project, its relationship declarations and plugin files from a "
        "package folder (package.json with steamHarness.projectInfo). Never touches KV."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the package folder (holding package.json)")
        parser.add_argument(
            "--watch",
            action="store_true",
            help=(
                f"keep running: look for changed files every {WATCH_INTERVAL} s, import "
                "again and reload open boards of the project (Ctrl+C stops)"
            ),
        )
        parser.add_argument(
            "--replace-database-changes",
            action="store_true",
            help=(
                "replace what was changed in the database (admin, REST) since the last "
                "import, or a project imported from another package under the same id; "
                "without it such changes stop the import and are listed (export_project "
                "writes them into a package)"
            ),
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["path"]
        replace = options["replace_database_changes"]
        if not options["watch"]:
            try:
                project = project_import(path=path, replace_database_changes=replace)
            except KanbanError as error:
                self.report_problems(error)
                if error.code == ErrorCode.CONFLICT:
                    self.stderr.write(
                        "export_project writes these into a package; "
                        "--replace-database-changes discards them"
                    )
                raise CommandError(f"{path}: nothing imported") from None
            self.report_import(project)
            return
        self.stdout.write(f"Watching {path} for changes (Ctrl+C stops).")
        try:
            for attempt in project_import_watch(path=path, replace_database_changes=replace):
                if attempt.error is not None:
                    self.report_problems(attempt.error)
                    self.stderr.write(f"{path}: nothing imported; still watching")
                elif attempt.project is not None:
                    self.report_import(attempt.project)
        except KeyboardInterrupt:
            self.stdout.write("Stopped watching.")

    def report_import(self, project: Project) -> None:
        relationships = project.relationships.count()
        files = project.plugin_files.count()
        self.stdout.write(
            f"Imported {project.name} ({project.id}): {project.type}, "
            f"{relationships} relationship(s), {files} plugin file(s)"
        )

    def report_problems(self, error: KanbanError) -> None:
        problems = error.details.get("problems") or [{"path": "", "message": error.message}]
        for problem in problems:
            where = f"{problem['path']}: " if problem["path"] else ""
            self.stderr.write(f"{where}{problem['message']}")
