from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from storage import dump


class Command(BaseCommand):
    help = (
        "Write the storage engine's data (every value, list element and kept version, with "
        "its seq) to a JSONL file. Not a deployment's backup: users, boards and memberships "
        "are not in it; manage.py backup carries both."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="output path, or - for standard output")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["file"] == "-":
            count = dump.dump(sys.stdout)
        else:
            with open(options["file"], "w", encoding="utf-8") as out:
                count = dump.dump(out)
        self.stderr.write(f"dumped {count} records")
