"""Write a new kanban plugin package (package.json with a fresh project id, index.html, app.js,
style.css, README.md) into DIR, default ./NAME, which must be missing or empty, and create its
project, owned by --owner."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from kanban.management.base import KanbanCommand
from kanban.management.owners import NO_OWNER, add_owner_argument, resolve_owner
from kanban.projects.plugin_workflow import check_plugin_start, plugin_create


class Command(KanbanCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the plugin's (and project's) name")
        parser.add_argument("dir", nargs="?", help="the folder to write (default: ./NAME)")
        parser.add_argument(
            "--typescript",
            action="store_true",
            help="app.ts instead of app.js; import_project builds app.js from it with esbuild",
        )
        add_owner_argument(parser, what="the new project")

    def handle(self, *args: Any, **options: Any) -> None:
        # Before the owner is asked for and before anything is written: a refusal leaves
        # nothing behind, and the same command can be run again.
        start = check_plugin_start(
            name=options["name"], path=options["dir"], typescript=options["typescript"]
        )
        owner = resolve_owner(options["owner"])
        project = plugin_create(start=start, owner=owner)
        folder = start.folder
        owned = f"owned by {owner.get_username()}" if owner is not None else "with no owner yet"
        self.stdout.write(
            f"Created the plugin {options['name']!r} in {folder}: project {project.id}, "
            f"{owned}.\n"
            "Next:\n"
            f"  python manage.py import_project {folder} --watch\n"
            f"  open /boards/{project.id}/"
        )
        if owner is None:
            self.stderr.write(NO_OWNER.format(project_id=project.id))
