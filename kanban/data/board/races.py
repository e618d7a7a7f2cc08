"""Writing a Board under concurrent writers: every write is a compare-and-set on the revision
just read, and one that lost the race reads again and retries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from storage.errors import ErrorCode, KanbanError

#: Compare-and-set rounds a write tries before it gives up (``conflict``).
MAX_ATTEMPTS: Final = 16


class Raced(Exception):
    """Someone wrote between our read and our write: read again and retry."""


def retrying(attempt: Callable[[], Any]) -> Any:
    for _ in range(MAX_ATTEMPTS):
        try:
            return attempt()
        except Raced:
            continue
    raise KanbanError(
        ErrorCode.CONFLICT, f"the board kept changing; gave up after {MAX_ATTEMPTS} tries"
    )
