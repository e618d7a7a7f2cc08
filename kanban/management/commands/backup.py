"""Write one archive (.zip) of everything this deployment holds: users and their password hashes,
boards, memberships, relationships, plugin files, tokens, invites, notifications,
configurations, every stored value with its kept versions, and the files attached to cards.
manage.py restore loads it into an empty database, SQLite or PostgreSQL."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from kanban.backup.archive import backup_write
from kanban.management.base import KanbanCommand


class Command(KanbanCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the archive to write, e.g. kanban.zip")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        manifest = backup_write(path=options["path"])
        counts = ", ".join(
            f"{part['rows']} {part.get('model', 'storage records')}"
            for part in manifest["parts"]
            if part["rows"]
        )
        files = [part for part in manifest["parts"] if part["kind"] == "file"]
        if files:
            size = sum(part["size"] for part in files)
            counts += f", {len(files)} attachment files ({size} bytes)"
        self.stdout.write(
            f"Wrote {options['path']} in {time.monotonic() - started:.1f} s: {counts}."
        )
