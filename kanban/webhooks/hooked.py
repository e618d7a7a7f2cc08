"""Which boards have a webhook that is on, as this process last read it.

Every committed card write asks; one query each was a third of a card write's time on
SQLite. So a process reads the list at most every ``SNAPSHOT_SECONDS`` and forgets it at
once when it adds, deletes, turns on or turns off a webhook itself: a change made in
another process is heard here within that long. A board it wrongly thinks hooked costs
one more query (``webhook_event_send`` reads the webhooks themselves)."""

from __future__ import annotations

import math
import time
from typing import Final
from uuid import UUID

from django.db import transaction

from kanban.models import Webhook

SNAPSHOT_SECONDS: Final = 2.0

_snapshot: frozenset[UUID] = frozenset()
_read_at: float = -math.inf


def hooked_projects() -> frozenset[UUID]:
    global _snapshot, _read_at
    now = time.monotonic()
    if now - _read_at > SNAPSHOT_SECONDS:
        _snapshot = frozenset(
            Webhook.objects.filter(active=True).values_list("project_id", flat=True).distinct()
        )
        _read_at = now
    return _snapshot


def hooked_projects_changed() -> None:
    """This process changed a webhook: read the list again next time, and once more after
    the change commits (a read in between would not see it yet)."""
    global _read_at
    _read_at = -math.inf

    def forget() -> None:
        global _read_at
        _read_at = -math.inf

    transaction.on_commit(forget)
