"""The dashboard's Trello import: upload a file (stored and queued, nothing more, so the
request answers at once), then the job's page, whose progress bar polls a small JSON view
(kanban/static/kanban/import-job.js; the pages' CSP allows no inline script) until the
report or the refusal."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from kanban.jobs.imports import (
    Job,
    import_job_get,
    import_job_start,
    import_jobs_recent,
    trello_import_bytes,
)
from storage.errors import ErrorCode, KanbanError

STATUS_OF = {ErrorCode.TOO_LARGE: 413, ErrorCode.RATE_LIMITED: 429}


def _form(request: HttpRequest, *, error: str = "", status: int = 200) -> HttpResponse:
    context: dict[str, Any] = {
        "error": error,
        "limit_mb": trello_import_bytes() // 2**20,
        "jobs": import_jobs_recent(actor=request.user),
    }
    return render(request, "kanban/import.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def import_trello(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _form(request)
    upload = request.FILES.get("file")
    if upload is None:
        return _form(request, error="Choose the JSON file Trello exported.", status=400)
    if upload.size is not None and upload.size > trello_import_bytes():
        # Refused before reading it: the size is known from the request.
        return _form(
            request, error=f"The file is larger than {trello_import_bytes()} bytes.", status=413
        )
    try:
        job = import_job_start(
            actor=request.user,
            file_name=upload.name or "",
            data=upload.read(),
            dry_run=request.POST.get("dry_run") == "on",
        )
    except KanbanError as refused:
        status = STATUS_OF.get(refused.code, 400)
        return _form(request, error=refused.message, status=status)
    return redirect("import-job", job_id=job.id)


def _job(request: HttpRequest, job_id: UUID) -> Job | None:
    try:
        return import_job_get(actor=request.user, job_id=job_id)
    except KanbanError:
        return None


@login_required
@require_GET
def import_job(request: HttpRequest, job_id: UUID) -> HttpResponse:
    job = _job(request, job_id)
    if job is None:
        return render(request, "404.html", {}, status=404)
    return render(request, "kanban/import_job.html", {"job": job})


@login_required
@require_GET
def import_job_status(request: HttpRequest, job_id: UUID) -> HttpResponse:
    job = _job(request, job_id)
    if job is None:
        return JsonResponse({"code": "not_found", "message": "No such import."}, status=404)
    return JsonResponse(job.as_dict(), headers={"Cache-Control": "no-store"})
