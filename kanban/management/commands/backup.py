"""``manage.py backup PATH``: one archive of everything this deployment holds (users and
their password hashes, boards, memberships, relationships, plugin files, tokens, invites,
notifications, configurations, every stored value with its kept versions, and the files
attached to cards)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from kanban.backup.archive import backup_write


class Command(BaseCommand):
    help = (
        "Write one archive (.zip) of everything this deployment holds; manage.py restore "
        "loads it into an empty database, SQLite or PostgreSQL."
    )

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
