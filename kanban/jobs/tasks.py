"""The tasks the worker runs. Each one loads its job, runs the work with a progress callback,
and records the outcome on the job, which is what its owner sees.

django-tasks (0.12, and its database backend) has no retries of its own: a task that raises
is marked failed, once. Here a run that fails unexpectedly (the database went away, a bug) is
enqueued again, later, up to ``MAX_ATTEMPTS`` runs in all; a refusal (``KanbanError``: not
JSON, too large...) is the job's answer and is never retried."""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Final
from uuid import UUID

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django_tasks import task
from django_tasks_db.models import DBTaskResult

from kanban.jobs.progress import ProgressReporter, progress_forget
from kanban.models import ImportJob, ImportUpload, JobStatus
from storage.errors import ErrorCode, KanbanError

logger = logging.getLogger(__name__)

#: Runs of one job at most, the first included.
MAX_ATTEMPTS = 3
#: A retry waits this long times the runs so far (5 s, then 10 s).
RETRY_DELAY = timedelta(seconds=5)


def _finish(job_id: UUID, status: JobStatus, *, keep_upload: bool = False, **fields: Any) -> None:
    with transaction.atomic():
        ImportJob.objects.filter(id=job_id).update(
            status=status, finished_at=timezone.now(), **fields
        )
        # The bytes were only kept for this job's runs, or a dry run's mapping step.
        if not keep_upload:
            ImportUpload.objects.filter(job_id=job_id).delete()
    progress_forget(job_id=job_id)


def _retry_later(job: ImportJob, delay: timedelta) -> None:
    ImportJob.objects.filter(id=job.id).update(status=JobStatus.QUEUED)
    again = archive_import_task if job.kind == ARCHIVE else trello_import_task
    if delay and again.get_backend().supports_defer:
        again = again.using(run_after=timezone.now() + delay)
    again.enqueue(str(job.id))


#: The kinds of import job (``ImportJob.kind``).
TRELLO: Final = "trello"
ARCHIVE: Final = "archive"


def _trello(job: ImportJob, data: bytes, progress: ProgressReporter) -> dict[str, Any]:
    # Imported here, not at the top: the import is the job's work, and the task module is
    # loaded by every worker and web process that enqueues.
    from kanban.imports.trello import trello_import

    return trello_import(
        actor=job.owner,
        data=data,
        dry_run=job.dry_run,
        mapping=(job.options or {}).get("mapping") or None,
        progress=progress,
    ).as_dict()


def _archive(job: ImportJob, data: bytes, progress: ProgressReporter) -> dict[str, Any]:
    from kanban.imports.board_archive import board_archive_import

    # The archive's import says nothing while it runs: the page shows it started, then done.
    progress(0, 1)
    return board_archive_import(actor=job.owner, data=data, dry_run=job.dry_run).as_dict()


@task()
def trello_import_task(job_id: str) -> None:
    """Imports a Trello export its owner uploaded (``kanban.jobs.imports.import_job_start``)."""
    _run(job_id, _trello)


@task()
def archive_import_task(job_id: str) -> None:
    """Imports a board archive its owner uploaded (``kanban.imports.board_archive``)."""
    _run(job_id, _archive)


def _run(job_id: str, work: Callable[[ImportJob, bytes, ProgressReporter], dict[str, Any]]) -> None:
    job = ImportJob.objects.select_related("owner").filter(id=UUID(job_id)).first()
    if job is None or job.status in {JobStatus.SUCCEEDED, JobStatus.FAILED}:
        return  # its owner is gone, or a second delivery of a job that ended
    upload = ImportUpload.objects.filter(job_id=job.id).first()
    if upload is None:
        _finish(
            job.id,
            JobStatus.FAILED,
            error_code=ErrorCode.NOT_FOUND,
            error_message="The uploaded file is no longer kept; upload it again.",
        )
        return
    attempts = job.attempts + 1
    ImportJob.objects.filter(id=job.id).update(
        status=JobStatus.RUNNING, attempts=F("attempts") + 1, started_at=timezone.now()
    )
    progress = ProgressReporter(job.id)
    try:
        report = work(job, zlib.decompress(upload.data), progress)
    except KanbanError as refused:
        _finish(
            job.id,
            JobStatus.FAILED,
            error_code=str(refused.code),
            error_message=refused.message,
            done=progress.done,
            total=progress.total,
        )
        return
    except Exception:
        if attempts < MAX_ATTEMPTS:
            logger.exception(
                "import job %s failed (run %d of %d), retrying", job.id, attempts, MAX_ATTEMPTS
            )
            _retry_later(job, RETRY_DELAY * attempts)
            return
        _finish(
            job.id,
            JobStatus.FAILED,
            error_code=ErrorCode.UNAVAILABLE,
            error_message=f"The import failed unexpectedly {attempts} times; nothing was "
            "imported. Try again later, or tell your administrator.",
        )
        raise  # the task's own result keeps the traceback, for the operator
    _finish(
        job.id,
        JobStatus.SUCCEEDED,
        # Kept for the page's mapping step, which imports it (import_job_run_mapped); the
        # owner's next upload ends it.
        keep_upload=job.dry_run,
        report=report,
        done=progress.total or progress.done,
        total=progress.total,
    )


def import_jobs_resume() -> int:
    """Jobs a worker left running when it stopped without ending them (killed, the machine
    went down) run again, as after a failed run, or end failed after their last; answers
    how many were queued again. Only where no other worker may be running one: the embedded
    default's worker calls it as it starts (kanban/jobs/worker.py)."""
    interrupted = RuntimeError("the worker stopped while running this task")
    paths = [trello_import_task.module_path, archive_import_task.module_path]
    for result in DBTaskResult.objects.running().filter(task_path__in=paths):
        result.set_failed(interrupted)
    queued = 0
    for job in ImportJob.objects.filter(status=JobStatus.RUNNING):
        if job.attempts < MAX_ATTEMPTS:
            _retry_later(job, timedelta(0))  # stopped, not failing: no reason to wait
            queued += 1
        else:
            _finish(
                job.id,
                JobStatus.FAILED,
                error_code=ErrorCode.UNAVAILABLE,
                error_message=f"The import was interrupted {job.attempts} times; nothing "
                "was imported. Try again later, or tell your administrator.",
            )
    return queued
