"""Load a manage.py backup archive into an empty, migrated database (either vendor, whichever made
the archive), all or nothing; --verify then compares each table's rows and checksum with the
archive's."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from kanban.backup.archive import backup_restore, backup_verify
from kanban.management.base import KanbanCommand
from storage.errors import KanbanError


class Command(KanbanCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the archive manage.py backup wrote")
        parser.add_argument(
            "--verify",
            action="store_true",
            help="after loading, compare rows and checksums of the database with the archive",
        )
        parser.add_argument(
            "--verify-only",
            action="store_true",
            help="load nothing: only compare this database with the archive",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["path"]
        try:
            if not options["verify_only"]:
                started = time.monotonic()
                manifest = backup_restore(path=path)
                rows = sum(part["rows"] for part in manifest["parts"])
                files = sum(part["kind"] == "file" for part in manifest["parts"])
                self.stdout.write(
                    f"Restored {rows} rows and {files} attachment files from {path} (made "
                    f"{manifest['created_at']} on "
                    f"{manifest['source']['vendor']}) in {time.monotonic() - started:.1f} s."
                )
            if options["verify"] or options["verify_only"]:
                self._verify(path)
        except KanbanError as error:
            raise CommandError(f"{error.code}: {error.message}; nothing was restored") from None

    def _verify(self, path: Path) -> None:
        checks = backup_verify(path=path)
        differing = [check for check in checks if not check.agrees]
        for check in differing:
            self.stderr.write(
                f"  {check.name}: {check.rows} {check.unit} (archive {check.expected_rows}), "
                f"sha256 {check.sha256[:12]} (archive {check.expected_sha256[:12]})"
            )
        if differing:
            raise CommandError(f"verify: {len(differing)} of {len(checks)} parts differ")
        self.stdout.write(f"Verified: all {len(checks)} parts agree (rows or bytes, and sha256).")
