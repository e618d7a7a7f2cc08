"""What every import answers: the board it made or updated (or, dry, would), and counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID


@dataclass(frozen=True)
class ImportReport:
    """What an import did (or, dry, would do); each kind adds what only it can say."""

    project_id: UUID | None
    board_name: str
    dry_run: bool
    created: bool
    counts: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {
            "projectId": None if self.project_id is None else str(self.project_id),
            "boardName": self.board_name,
            "dryRun": self.dry_run,
            "created": self.created,
            "counts": dict(self.counts),
        }
