"""Starting an import job and what its owner sees of it.

Starting only stores the upload and enqueues the task, in one transaction, so the request
that uploads answers at once and no job is left without its task (or a task without its
job) whatever stops between the two. The work, and every check of the file's content, is the
task's: a refused file is the job's outcome, shown on its page."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from kanban.jobs.progress import progress_read
from kanban.jobs.tasks import ARCHIVE, TRELLO, archive_import_task, trello_import_task
from kanban.models import ImportJob, ImportUpload, JobStatus, Membership
from storage.errors import ErrorCode, KanbanError, invalid_argument

#: The largest Trello export accepted, unless ``KANBAN_TRELLO_IMPORT_BYTES`` says otherwise.
DEFAULT_TRELLO_IMPORT_BYTES = 100 * 2**20
FILE_NAME_CHARS = 255
#: What an empty upload should have been, by the job's kind.
WHAT_FILE = {"trello": "the JSON file Trello exported", "archive": "a board archive (.zip)"}
#: zlib's fastest level: the upload's request waits for it.
UPLOAD_COMPRESSION = 1
#: Imports one person may have waiting or running: each keeps its upload (up to the size
#: limit) in the database and holds a worker, so one person cannot fill either.
MAX_OPEN_JOBS = 3


def trello_import_bytes() -> int:
    return int(getattr(settings, "KANBAN_TRELLO_IMPORT_BYTES", DEFAULT_TRELLO_IMPORT_BYTES))


@dataclass(frozen=True)
class Job:
    """A job as its owner sees it: progress while it runs, then the report or the refusal."""

    id: UUID
    kind: str
    file_name: str
    status: JobStatus
    dry_run: bool
    done: int
    total: int
    report: dict[str, Any] | None
    error: dict[str, str] | None
    created_at: datetime
    finished_at: datetime | None
    #: A finished dry run whose upload is still kept: its owner may import it (mapped).
    importable: bool = False

    @property
    def finished(self) -> bool:
        return self.status in {JobStatus.SUCCEEDED, JobStatus.FAILED}

    @property
    def percent(self) -> int:
        if self.status == JobStatus.SUCCEEDED:
            return 100
        return min(100, self.done * 100 // self.total) if self.total else 0

    @property
    def project_id(self) -> str | None:
        """The board the import made or updated (none for a dry run)."""
        if self.report is None or self.dry_run:
            return None
        project_id = self.report.get("projectId")
        return str(project_id) if project_id else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "kind": self.kind,
            "file_name": self.file_name,
            "status": str(self.status),
            "dry_run": self.dry_run,
            "done": self.done,
            "total": self.total,
            "percent": self.percent,
            "report": self.report,
            "error": self.error,
            "project_id": self.project_id,
            "created_at": self.created_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }


def _job_view(job: ImportJob, *, importable: bool = False) -> Job:
    done, total = job.done, job.total
    if job.status == JobStatus.RUNNING:
        done, total = progress_read(job_id=job.id) or (done, total)
    error = {"code": job.error_code, "message": job.error_message} if job.error_code else None
    return Job(
        id=job.id,
        kind=job.kind,
        file_name=job.file_name,
        status=JobStatus(job.status),
        dry_run=job.dry_run,
        done=done,
        total=total,
        report=job.report,
        error=error,
        created_at=job.created_at,
        finished_at=job.finished_at,
        importable=importable,
    )


def import_job_start(
    *,
    actor: Any,
    file_name: str,
    data: bytes,
    dry_run: bool = False,
    mapping: dict[str, str] | None = None,
    kind: str = TRELLO,
) -> Job:
    """Keeps the uploaded Trello export (``kind`` archive: a board archive) and enqueues its
    import (``mapping``: Trello member ids to usernames here); answers the queued job."""
    limit = trello_import_bytes()
    if len(data) > limit:
        raise KanbanError(
            ErrorCode.TOO_LARGE,
            f"The file is {len(data)} bytes; a file to import may be at most {limit} bytes.",
            limit=limit,
        )
    if kind not in (TRELLO, ARCHIVE):
        raise invalid_argument(f"no import of kind {kind!r}", field="kind")
    if not data:
        raise invalid_argument(f"The file is empty: choose {WHAT_FILE[kind]}.")
    with transaction.atomic():
        _check_open_jobs(actor)
        # One dry run's upload is kept for its mapping step at a time: a new upload ends
        # the last one's.
        ImportUpload.objects.filter(
            job__owner_id=actor.pk, job__status__in=[JobStatus.SUCCEEDED, JobStatus.FAILED]
        ).delete()
        job = ImportJob.objects.create(
            owner=actor,
            kind=kind,
            file_name=(file_name or "upload")[:FILE_NAME_CHARS],
            size=len(data),
            dry_run=dry_run,
            options={"mapping": _checked_mapping(mapping or {})},
        )
        # Compressed: an export is repetitive JSON (a generated 10 MB one is 0.4 MB, in 20 ms),
        # and a 65 MB upload took 2.1 s to write to PostgreSQL as it came.
        ImportUpload.objects.create(job=job, data=zlib.compress(data, UPLOAD_COMPRESSION))
        # In the same transaction: the database backend's task row commits with the job.
        _task_of(kind).enqueue(str(job.id))
    return _job_view(job)


def import_job_run_mapped(*, actor: Any, job_id: UUID, mapping: dict[str, str]) -> Job:
    """Imports the export a finished dry run of the actor's read, its members mapped as
    ``mapping`` says (Trello member id to a username here; a member not in it is matched by
    username, or kept by name on the card); answers the new, queued job."""
    with transaction.atomic():
        _check_open_jobs(actor)
        dry = (
            ImportJob.objects.select_for_update()
            .filter(id=job_id, owner_id=actor.pk, dry_run=True, status=JobStatus.SUCCEEDED)
            .first()
        )
        if dry is None or not ImportUpload.objects.filter(job_id=dry.id).exists():
            raise KanbanError(
                ErrorCode.NOT_FOUND,
                "This dry run's file is no longer kept (a later upload replaced it): upload "
                "it again.",
            )
        members = {str(member.get("id")) for member in (dry.report or {}).get("unmatched") or []}
        strangers = sorted(set(mapping) - members)
        if strangers:
            raise invalid_argument(
                f"{strangers[0]!r} is no member of this export left to map", field="mapping"
            )
        job = ImportJob.objects.create(
            owner=actor,
            kind=dry.kind,
            file_name=dry.file_name,
            size=dry.size,
            options={"mapping": _checked_mapping(mapping)},
        )
        # The bytes move to the new job: never copied, and the dry run keeps none.
        ImportUpload.objects.filter(job_id=dry.id).update(job_id=job.id)
        _task_of(job.kind).enqueue(str(job.id))
    return _job_view(job)


def _task_of(kind: str) -> Any:
    return archive_import_task if kind == ARCHIVE else trello_import_task


def _check_open_jobs(actor: Any) -> None:
    # The person's row, locked: two uploads at once are counted one after the other.
    get_user_model().objects.select_for_update().filter(pk=actor.pk).exists()
    open_jobs = ImportJob.objects.filter(
        owner_id=actor.pk, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]
    ).count()
    if open_jobs >= MAX_OPEN_JOBS:
        raise KanbanError(
            ErrorCode.RATE_LIMITED,
            f"You have {open_jobs} imports waiting or running; wait for one to finish.",
        )


def _checked_mapping(mapping: dict[str, str]) -> dict[str, str]:
    """Every username the mapping names is a user here: refused now, not in the job."""
    names = set(mapping.values())
    found = set(
        get_user_model().objects.filter(username__in=names).values_list("username", flat=True)
    )
    missing = sorted(names - found)
    if missing:
        raise invalid_argument(f"{missing[0]!r} is no user here", field="mapping")
    return dict(mapping)


def mapping_candidates(*, actor: Any) -> list[str]:
    """The people the actor may map a Trello member to at a glance: everyone on a board of
    hers, herself included (anyone else by username)."""
    boards = Membership.objects.filter(user_id=actor.pk).values("project_id")
    return sorted(
        set(
            Membership.objects.filter(project_id__in=boards).values_list(
                "user__username", flat=True
            )
        )
        | {actor.get_username()}
    )


def import_job_get(*, actor: Any, job_id: UUID) -> Job:
    """The actor's own job; anyone else's is not found, as if it did not exist."""
    job = ImportJob.objects.filter(id=job_id, owner_id=actor.pk).first()
    if job is None:
        raise KanbanError(ErrorCode.NOT_FOUND, "No such import.")
    importable = (
        job.dry_run
        and job.status == JobStatus.SUCCEEDED
        and ImportUpload.objects.filter(job_id=job.id).exists()
    )
    return _job_view(job, importable=importable)


def import_jobs_recent(*, actor: Any, limit: int = 10) -> list[Job]:
    jobs = ImportJob.objects.filter(owner_id=actor.pk).order_by("-created_at")[:limit]
    return [_job_view(job) for job in jobs]
