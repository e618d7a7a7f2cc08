"""A board's webhooks page, for its owners: add a URL and its events (the signing secret
shown once), each webhook's delivery log (status, time, response code), Send test, Delete.
The services are ``kanban.webhooks.service``; this parses the form and renders."""

from __future__ import annotations

from typing import Any, Final
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from kanban.models import Project
from kanban.web.views import page_refusals, refusal_page
from kanban.webhooks.service import (
    SUBSCRIBABLE,
    webhook_create,
    webhook_delete,
    webhook_test,
    webhooks_of_board,
)
from storage.errors import ErrorCode, KanbanError

_CREATED: Final = "kanban.webhook_created"


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def webhooks_page(request: HttpRequest, project_id: UUID) -> HttpResponse:
    created: dict[str, Any] | None = None
    error: dict[str, str] | None = None
    form: dict[str, Any] = {"url": "", "events": [str(event) for event in SUBSCRIBABLE]}
    if request.method == "POST":
        form = {
            "url": request.POST.get("url", "").strip(),
            "events": request.POST.getlist("events"),
        }
        try:
            webhook, secret = webhook_create(
                actor=request.user, project_id=project_id, url=form["url"], events=form["events"]
            )
        except KanbanError as refused:
            if refused.code != ErrorCode.INVALID_ARGUMENT:
                return refusal_page(request, refused)
            error = {"message": refused.message, "reason": str(refused.details.get("reason", ""))}
        else:
            # Shown once, on the page the redirect leads to (a reload adds no second one).
            request.session[_CREATED] = {"id": webhook.pk, "secret": secret}
            return redirect("board-webhooks", project_id=project_id)
    try:
        hooks = webhooks_of_board(actor=request.user, project_id=project_id)
    except KanbanError as refused:
        return refusal_page(request, refused)
    shown = request.session.pop(_CREATED, None)
    if isinstance(shown, dict):
        made = next((h.webhook for h in hooks if h.webhook.pk == shown.get("id")), None)
        created = None if made is None else {"webhook": made, "secret": shown.get("secret")}
    context = {
        "project": Project.objects.get(pk=project_id),
        "webhooks": hooks,
        "events": [(str(event), event.label) for event in SUBSCRIBABLE],
        "form": form,
        "error": error,
        "created": created,
        "tested": request.GET.get("tested", ""),
    }
    return render(request, "kanban/webhooks.html", context, status=400 if error else 200)


@login_required
@require_POST
@page_refusals
def webhook_test_page(request: HttpRequest, project_id: UUID, webhook_id: int) -> HttpResponse:
    webhook_test(actor=request.user, project_id=project_id, webhook_id=webhook_id)
    return redirect(f"{reverse('board-webhooks', args=[project_id])}?tested={webhook_id}")


@login_required
@require_POST
@page_refusals
def webhook_delete_page(request: HttpRequest, project_id: UUID, webhook_id: int) -> HttpResponse:
    webhook_delete(actor=request.user, project_id=project_id, webhook_id=webhook_id)
    return redirect("board-webhooks", project_id=project_id)
