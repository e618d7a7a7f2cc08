"""The staff data viewers inside Django admin: the KV viewer and the Knowledge documents
browser. Thin: parse the query, call one ``kanban.admin.data_viewers`` service, render an admin
page. ``ProjectAdmin.get_urls`` mounts them behind ``admin_site.admin_view`` (staff only)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.views.decorators.http import require_http_methods

from kanban.admin.data_viewers import (
    DocumentsPage,
    viewer_document,
    viewer_documents_page,
    viewer_kv_history,
    viewer_kv_page,
    viewer_kv_purge,
    viewer_kv_restore,
)
from kanban.data.token_usage import FIELDS, USAGE_KEY, Usage, system_token_usage
from kanban.models import Project
from storage.errors import Conflict, ErrorCode, KanbanError
from storage.kv import Dataset
from storage.namespaces import DOMAINS, Domain

DATASET_LABELS: dict[Domain, str] = {"kv": "KV", "persistentValue": "PersistentValue"}


def _context(request: HttpRequest, title: str, **extra: Any) -> dict[str, Any]:
    return {
        **admin.site.each_context(request),
        "title": title,
        "opts": Project._meta,
        **extra,
    }


def _check_staff(request: HttpRequest) -> None:
    """Staff who may view projects in the admin. ``admin_view`` already sends anyone who is
    not staff to the login page; this also guards direct use."""
    user: Any = request.user
    if not (user.is_active and user.is_staff and user.has_perm("kanban.view_project")):
        raise PermissionDenied


def kv_viewer(request: HttpRequest) -> HttpResponse:
    """Choose a project and dataset, search keys by prefix, page with ``after``."""
    _check_staff(request)
    params = request.GET
    projects = list(Project.objects.order_by("name").values_list("id", "name"))
    domain = params.get("dataset", "kv")
    form = {
        "project": params.get("project", ""),
        "dataset": domain if domain in DOMAINS else "kv",
        "conversation": params.get("conversation", ""),
        "prefix": params.get("prefix", ""),
    }
    page = None
    error = None
    project = None
    if form["project"]:
        try:
            project = Project.objects.filter(pk=UUID(form["project"])).first()
        except ValueError:
            project = None
        if project is None:
            error = "No such project."
    if project is not None:
        try:
            page = viewer_kv_page(
                dataset=Dataset(
                    project.id,
                    form["dataset"],  # type: ignore[arg-type]
                    form["conversation"] or None,
                ),
                prefix=form["prefix"],
                start_after=params.get("after") or None,
            )
        except KanbanError as exc:
            error = exc.message
    next_url = None
    if page is not None and page.next is not None:
        next_url = "?" + urlencode({**form, "after": page.next})
    first_url = "?" + urlencode(form) if params.get("after") else None
    return TemplateResponse(
        request,
        "admin/kanban/kv_viewer.html",
        _context(
            request,
            "KV viewer",
            projects=projects,
            datasets=list(DATASET_LABELS.items()),
            form=form,
            project=project,
            page=page,
            error=error,
            next_url=next_url,
            first_url=first_url,
        ),
    )


@require_http_methods(["GET", "POST"])
def kv_history(request: HttpRequest) -> HttpResponse:
    """One key's kept versions, newest first; POST restores one of them as a
    compare-and-set write over the revision the page showed (so an edit made since is not
    undone unseen), or with ``purge`` deletes them all (their room in the project's storage
    quota back)."""
    _check_staff(request)
    params = request.POST if request.method == "POST" else request.GET
    form = {name: params.get(name, "") for name in ("project", "dataset", "conversation", "key")}
    try:
        project = get_object_or_404(Project, pk=UUID(form["project"]))
    except ValueError:
        raise Http404("no such project") from None
    domain: Domain = "persistentValue" if form["dataset"] == "persistentValue" else "kv"
    dataset = Dataset(project.id, domain, form["conversation"] or None)
    here = "?" + urlencode(form)
    if request.method == "POST":
        if not request.user.has_perm("kanban.change_project"):
            raise PermissionDenied
        if params.get("purge"):
            purged = viewer_kv_purge(dataset=dataset, key=form["key"])
            messages.success(request, f"{purged} kept versions purged.")
            return HttpResponseRedirect(here)
        revision = params.get("revision", "")
        try:
            written = viewer_kv_restore(
                dataset=dataset,
                key=form["key"],
                revision=revision,
                expected_revision=params.get("expected") or None,
                username=request.user.get_username(),
            )
        except Conflict:
            messages.error(
                request,
                "The key changed since that page was shown, so nothing was written: "
                "look at its history again before restoring.",
            )
        except KanbanError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"Revision {revision} restored as revision {written}.")
        return HttpResponseRedirect(here)
    page, error = None, None
    try:
        page = viewer_kv_history(
            dataset=dataset, key=form["key"], before=request.GET.get("before") or None
        )
    except KanbanError as exc:
        error = exc.message
    older = None
    if page is not None and page.next is not None:
        older = "?" + urlencode({**form, "before": page.next})
    return TemplateResponse(
        request,
        "admin/kanban/kv_history.html",
        _context(
            request,
            f"History of {form['key']}",
            project=project,
            form=form,
            dataset_label=DATASET_LABELS[domain],
            page=page,
            error=error,
            older_url=older,
            viewer_url="?" + urlencode({k: form[k] for k in ("project", "dataset")}),
        ),
    )


def documents_browser(request: HttpRequest, project_id: UUID) -> HttpResponse:
    """A project's Knowledge documents, one index page at a time (``cursor``)."""
    _check_staff(request)
    project = get_object_or_404(Project, pk=project_id)
    cursor = request.GET.get("cursor") or None
    page: DocumentsPage | None = None
    error: str | None = None
    try:
        page = viewer_documents_page(project_id=project.id, cursor=cursor)
    except KanbanError as exc:
        if exc.code != ErrorCode.INVALID_ARGUMENT:
            raise
        error = exc.message
    next_url = None
    if page is not None and page.next is not None:
        next_url = "?" + urlencode({"cursor": page.next})
    return TemplateResponse(
        request,
        "admin/kanban/documents.html",
        _context(
            request,
            f"Knowledge documents of {project.name}",
            project=project,
            page=page,
            error=error,
            next_url=next_url,
            first_url="?" if cursor else None,
        ),
    )


def document_view(request: HttpRequest, project_id: UUID, document_id: str) -> HttpResponse:
    _check_staff(request)
    project = get_object_or_404(Project, pk=project_id)
    try:
        found = viewer_document(project_id=project.id, document_id=document_id)
    except KanbanError as exc:
        if exc.code in (ErrorCode.NOT_FOUND, ErrorCode.INVALID_ARGUMENT):
            raise Http404(exc.message) from None
        raise
    return TemplateResponse(
        request,
        "admin/kanban/document.html",
        _context(request, found.document.title, project=project, view=found),
    )


def _cells(usage: Usage) -> list[int]:
    return [*(usage.totals[name] for name in FIELDS), usage.total_tokens]


def token_usage(request: HttpRequest) -> HttpResponse:
    """Every project's token totals and the system total, their sum."""
    _check_staff(request)
    usage = system_token_usage()
    context = _context(
        request,
        "Token usage",
        labels=list(FIELDS.values()),
        rows=[(project, _cells(row), row.malformed) for project, row in usage.projects],
        total=_cells(usage.total),
        key=USAGE_KEY,
    )
    return TemplateResponse(request, "admin/kanban/token_usage.html", context)
