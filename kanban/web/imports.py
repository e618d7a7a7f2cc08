"""The dashboard's imports, a Trello export or a board archive: upload a file (stored and
queued, nothing more, so the request answers at once), then the job's page, whose progress
bar polls a small JSON view (kanban/static/kanban/import-job.js; the pages' CSP allows no
inline script) until the report or the refusal. A finished dry run's page is the mapping
step: its Trello members who are no user here, each mapped to a person or kept by name,
then imported from the kept file (a plain form: it works without script too)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from kanban.jobs.imports import (
    Job,
    import_job_get,
    import_job_run_mapped,
    import_job_start,
    import_jobs_recent,
    mapping_candidates,
    trello_import_bytes,
)
from kanban.jobs.tasks import ARCHIVE, TRELLO
from storage.errors import ErrorCode, KanbanError

STATUS_OF = {
    ErrorCode.TOO_LARGE: 413,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.NOT_FOUND: 404,
    # The boards one person may own (as REST answers it, kanban/api/errors.py).
    ErrorCode.LIMIT_REACHED: 409,
}


def _form(request: HttpRequest, *, kind: str, error: str = "", status: int = 200) -> HttpResponse:
    context: dict[str, Any] = {
        "kind": kind,
        "error": error,
        "limit_mb": trello_import_bytes() // 2**20,
        "jobs": import_jobs_recent(actor=request.user),
    }
    return render(request, "kanban/import.html", context, status=status)


def _upload(request: HttpRequest, *, kind: str) -> HttpResponse:
    if request.method == "GET":
        return _form(request, kind=kind)
    upload = request.FILES.get("file")
    if upload is None:
        return _form(request, kind=kind, error="Choose the file to import.", status=400)
    if upload.size is not None and upload.size > trello_import_bytes():
        # Refused before reading it: the size is known from the request.
        return _form(
            request,
            kind=kind,
            error=f"The file is larger than {trello_import_bytes()} bytes.",
            status=413,
        )
    try:
        job = import_job_start(
            actor=request.user,
            file_name=upload.name or "",
            data=upload.read(),
            dry_run=request.POST.get("dry_run") == "on",
            kind=kind,
        )
    except KanbanError as refused:
        status = STATUS_OF.get(refused.code, 400)
        return _form(request, kind=kind, error=refused.message, status=status)
    return redirect("import-job", job_id=job.id)


@login_required
@require_http_methods(["GET", "POST"])
def import_trello(request: HttpRequest) -> HttpResponse:
    return _upload(request, kind=TRELLO)


@login_required
@require_http_methods(["GET", "POST"])
def import_archive(request: HttpRequest) -> HttpResponse:
    return _upload(request, kind=ARCHIVE)


def _job(request: HttpRequest, job_id: UUID) -> Job | None:
    try:
        return import_job_get(actor=request.user, job_id=job_id)
    except KanbanError:
        return None


def job_page(view: Callable[[HttpRequest, Job], HttpResponse]) -> Callable[..., HttpResponse]:
    """The view, given the caller's job its address names; anyone else's, or none, is the
    product's 404 page."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, job_id: UUID) -> HttpResponse:
        job = _job(request, job_id)
        if job is None:
            return render(request, "404.html", {}, status=404)
        return view(request, job)

    return wrapped


def _job_page(
    request: HttpRequest, job: Job, *, error: str = "", status: int = 200
) -> HttpResponse:
    context: dict[str, Any] = {"job": job, "map_error": error}
    if job.importable and job.kind == TRELLO:
        context["candidates"] = mapping_candidates(actor=request.user)
    return render(request, "kanban/import_job.html", context, status=status)


@login_required
@require_GET
@job_page
def import_job(request: HttpRequest, job: Job) -> HttpResponse:
    return _job_page(request, job)


def _mapping(request: HttpRequest, job: Job) -> dict[str, str]:
    """Each unmatched member's choice: a username typed wins over one picked; neither
    keeps the member by name on the card."""
    mapping: dict[str, str] = {}
    for member in (job.report or {}).get("unmatched") or []:
        member_id = str(member.get("id"))
        typed = request.POST.get(f"username-{member_id}", "").strip()
        picked = request.POST.get(f"member-{member_id}", "").strip()
        if typed or picked:
            mapping[member_id] = typed or picked
    return mapping


@login_required
@require_POST
@job_page
def import_job_run(request: HttpRequest, job: Job) -> HttpResponse:
    """The mapping step's form: import the dry run's kept file, members mapped."""
    try:
        started = import_job_run_mapped(
            actor=request.user, job_id=job.id, mapping=_mapping(request, job)
        )
    except KanbanError as refused:
        return _job_page(
            request, job, error=refused.message, status=STATUS_OF.get(refused.code, 400)
        )
    return redirect("import-job", job_id=started.id)


@login_required
@require_GET
def import_job_status(request: HttpRequest, job_id: UUID) -> HttpResponse:
    job = _job(request, job_id)
    if job is None:
        return JsonResponse({"code": "not_found", "message": "No such import."}, status=404)
    return JsonResponse(job.as_dict(), headers={"Cache-Control": "no-store"})
