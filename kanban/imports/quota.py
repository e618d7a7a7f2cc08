"""An import past the project's storage quota is refused whole, before it is tried (the
commit would refuse it too, counting what the board holds already)."""

from __future__ import annotations

from django.conf import settings

from storage.errors import ErrorCode, KanbanError
from storage.usage import text_bytes
from storage.writes import SetValue, Write


def check_import_size(writes: list[Write], *, file_bytes: int = 0, counted: str) -> None:
    """Refuse ``writes`` (and ``file_bytes`` of attachments' files) past
    ``KANBAN_PROJECT_BYTES``; ``counted`` says how the message's size was counted."""
    limit = int(settings.KANBAN_PROJECT_BYTES)
    # Counted as the storage quota counts a set: its value, and its kept version too.
    size = file_bytes + sum(
        text_bytes(write.text) * (2 if write.keep else 1)
        for write in writes
        if isinstance(write, SetValue)
    )
    if size > limit:
        raise KanbanError(
            ErrorCode.TOO_LARGE,
            f"this board is {size} bytes {counted}; a board may hold at most {limit} "
            "(KANBAN_PROJECT_BYTES)",
            limit=limit,
        )
