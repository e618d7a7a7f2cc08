"""Create or update a project, its relationship declarations and plugin files from a package
folder (package.json with steamHarness.projectInfo); with --watch, again after every change to
its files. Never touches KV."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from kanban.access.relationships import relationships_declare_back
from kanban.management.base import KanbanCommand
from kanban.management.owners import NO_OWNER, add_owner_argument, resolve_owner
from kanban.models import Project
from kanban.projects.packages import read_package
from kanban.projects.plugin_workflow import (
    WATCH_INTERVAL,
    project_build_and_import,
    project_import_watch,
)
from storage.errors import ErrorCode, KanbanError


class Command(KanbanCommand):
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
        add_owner_argument(
            parser,
            what="the project when this import creates it",
            more="; an existing project's members are left alone",
        )
        parser.add_argument(
            "--declare-back",
            action="store_true",
            help=(
                "for each related project the owner (--owner, or the default) owns too, "
                "declare this one there (read all, write none), so the relationship is "
                "confirmed at once; others stay pending until their owners declare it"
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
        owner = self.owner_if_new(path, options["owner"])
        if not options["watch"]:
            try:
                project = project_build_and_import(
                    path=path, replace_database_changes=replace, owner=owner
                )
            except KanbanError as error:
                self.report_problems(error)
                if error.code == ErrorCode.CONFLICT:
                    self.stderr.write(
                        "export_project writes these into a package; "
                        "--replace-database-changes discards them"
                    )
                raise CommandError(f"{path}: nothing imported") from None
            self.report_import(project)
            self.warn_ownerless(project, owner)
            if options["declare_back"]:
                self.declare_back(project, owner or resolve_owner(options["owner"]))
            return
        self.stdout.write(f"Watching {path} for changes (Ctrl+C stops).")
        try:
            watching = project_import_watch(
                path=path, replace_database_changes=replace, owner=owner
            )
            for attempt in watching:
                if attempt.error is not None:
                    self.report_problems(attempt.error)
                    self.stderr.write(f"{path}: nothing imported; still watching")
                elif attempt.project is not None:
                    self.report_import(attempt.project)
        except KeyboardInterrupt:
            self.stdout.write("Stopped watching.")

    def owner_if_new(self, path: str, username: str | None) -> Any:
        """The owner a project this import creates gets; None when it exists already (or
        the package cannot be read: the import says why)."""
        try:
            project_id = read_package(Path(path)).project_id
        except (KanbanError, OSError):
            return None
        if Project.objects.filter(pk=project_id).exists():
            return None
        return resolve_owner(username)

    def declare_back(self, project: Project, actor: Any) -> None:
        if actor is None:
            raise CommandError("--declare-back needs to know who you are: give --owner USERNAME")
        for other, alias in relationships_declare_back(actor=actor, project=project):
            self.stdout.write(f"Declared {project.name} back in {other.name} as {alias!r}")

    def warn_ownerless(self, project: Project, owner: Any) -> None:
        if owner is None and not project.memberships.filter(role="owner").exists():
            self.stderr.write(NO_OWNER.format(project_id=project.id))

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
            # A file name in no UTF-8 comes from disk as surrogates, which no stream takes.
            line = f"{where}{problem['message']}".encode("utf-8", "backslashreplace")
            self.stderr.write(line.decode("utf-8"))
