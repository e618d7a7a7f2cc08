"""What the import commands (import_board, import_trello) share: reading the file they are
given, bounded, and the opening of the report they print."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from django.core.management.base import CommandError

from kanban.imports.report import ImportReport


def read_bounded(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of ``path`` and one more: enough for the importer to refuse
    a file over its limit, however large the file is."""
    try:
        with path.open("rb") as file:
            return file.read(limit + 1)
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror}") from None


def report_opening(report: ImportReport) -> Iterator[str]:
    """Where the board went (or, dry, would go), then what the import counted."""
    if report.dry_run:
        what = "a new board" if report.created else f"board {report.project_id}"
        yield f"Dry run: nothing written. {report.board_name} would go to {what}:"
    else:
        how = "as a new board" if report.created else "again, updating its board"
        yield f"Imported {report.board_name} {how} ({report.project_id}):"
    for name, count in report.counts.items():
        yield f"  {count} {name}"
