"""``manage.py startplugin NAME [DIR]``: write a working plugin package to start from."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from kanban.projects.packages import read_package
from kanban.projects.plugin_workflow import plugin_start
from storage.errors import KanbanError


class Command(BaseCommand):
    help = (
        "Write a new kanban plugin package (package.json with a fresh project id, index.html, "
        "app.js, style.css, README.md) into DIR, default ./NAME, which must be missing or empty."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the plugin's (and project's) name")
        parser.add_argument("dir", nargs="?", help="the folder to write (default: ./NAME)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            folder = plugin_start(name=options["name"], path=options["dir"])
        except KanbanError as error:
            raise CommandError(error.message) from None
        project_id = read_package(folder).project_id
        self.stdout.write(
            f"Created the plugin {options['name']!r} in {folder} (project {project_id}).\n"
            "Next:\n"
            f"  python manage.py import_project {folder} --watch\n"
            f"  python manage.py membership YOUR_USERNAME {project_id} developer\n"
            f"  open /boards/{project_id}/"
        )
