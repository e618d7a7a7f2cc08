"""How far a running job has got, where every web worker can read it while the job runs.

Not in the job's row: an import writes its board in one transaction, and a progress row
updated inside it stays invisible to other connections until the very end (on SQLite a
second connection would even wait for the import's write lock). The ``jobs`` cache is Redis
in a deployment and files under ``var/`` on the embedded default (kanban/settings.py)."""

from __future__ import annotations

import time
from uuid import UUID

from django.core.cache import caches

#: How long a progress entry outlives its last update: a worker that died leaves none behind.
KEPT_SECONDS = 3600
#: Updates closer together than this are not written (the page polls once a second).
EVERY_SECONDS = 0.2


def _key(job_id: UUID) -> str:
    return f"job-progress:{job_id}"


def progress_read(*, job_id: UUID) -> tuple[int, int] | None:
    """``(done, total)`` of a running job, or None when it has reported nothing yet."""
    entry = caches["jobs"].get(_key(job_id))
    return (int(entry[0]), int(entry[1])) if entry else None


def progress_forget(*, job_id: UUID) -> None:
    caches["jobs"].delete(_key(job_id))


class ProgressReporter:
    """The ``progress(done, total)`` callback a job's work is given; remembers the last one."""

    def __init__(self, job_id: UUID) -> None:
        self.job_id = job_id
        self.done = 0
        self.total = 0
        self._written_at = 0.0

    def __call__(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        now = time.monotonic()
        if now - self._written_at >= EVERY_SECONDS or done >= total:
            self._written_at = now
            caches["jobs"].set(_key(self.job_id), (done, total), KEPT_SECONDS)
