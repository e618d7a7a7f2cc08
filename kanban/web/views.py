"""Plain HTML views. Each parses the request, calls one service and renders."""

from __future__ import annotations

import functools
import hmac
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from kanban.access.context import plugin_context
from kanban.accounts.preferences import color_scheme_of
from kanban.data import configurations
from kanban.observability.metrics import REGISTRY, sample_db_pool
from kanban.projects import boards
from kanban.projects.appearance import BOARD_COLORS, board_color
from kanban.web.avatars import avatar
from kanban.web.security import (
    PLUGIN_SANDBOX,
    host_csp,
    plugin_csp,
    plugin_opened_at_top_level,
    plugin_top_level_refusal,
    plugin_url,
)
from storage.errors import ErrorCode, KanbanError

#: How many members' faces the board's top bar shows before "+N".
BAR_FACES = 4


@require_GET
@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    """This worker's metrics for Prometheus, to ``Authorization: Bearer
    $KANBAN_METRICS_TOKEN`` only; absent (404) while no token is set. The public proxy does
    not route it (deploy/nginx.conf): Prometheus scrapes each worker itself."""
    expected = settings.KANBAN_METRICS_TOKEN
    if not expected:
        raise Http404("no metrics here")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip(), expected):
        return HttpResponse(status=403)
    sample_db_pool()
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico whatever the page says; the icon is the static SVG."""
    return redirect(static("kanban/favicon.svg"), permanent=True)


@login_required
@require_GET
@never_cache
@ensure_csrf_cookie  # the configuration picker writes through the API with X-CSRFToken
def board(request: HttpRequest, project_id: UUID) -> HttpResponse:
    try:
        project = boards.access_board(user=request.user, project_id=project_id)
    except KanbanError:
        # The product's own page, in development too (Django's debug 404 would list every
        # URL pattern to a person just removed from the board).
        return board_not_found(request)
    active = configurations.configuration_active(user=request.user, project_id=project.id)
    shared = plugin_context(user=request.user, project_id=project.id)
    faces = [
        avatar(username=member["username"], display_name=member["displayName"])
        for member in shared["members"]
    ]
    context = {
        "project": project,
        "board_color": BOARD_COLORS[board_color(project)],
        "faces": faces[:BAR_FACES],
        "faces_more": max(0, len(faces) - BAR_FACES),
        "plugin_sandbox": PLUGIN_SANDBOX,
        "board_data": {
            "projectId": str(project.id),
            "name": project.name,
            "pluginUrl": _with_scheme(
                plugin_url(project.id, project.kanban_entry), color_scheme_of(user=request.user)
            ),
            "configuration": active.for_bridge(),
            "context": shared,
            "limits": {
                "valueBytes": settings.KANBAN_MAX_VALUE_BYTES,
                "documentBytes": settings.KANBAN_MAX_DOCUMENT_BYTES,
                "attachmentBytes": settings.KANBAN_ATTACHMENT_BYTES,
            },
        },
    }
    response = render(request, "kanban/board.html", context)
    response["Content-Security-Policy"] = host_csp(request)
    return response


def _with_scheme(url: str, scheme: str) -> str:
    """The plugin page's address, telling it the colour scheme the person chose (``?colorScheme=
    dark|light``; bridge_js/README.md): a cross-origin frame's prefers-color-scheme is the
    device's, not the page's. No parameter while they follow the device."""
    return url if scheme == "system" else f"{url}?{urlencode({'colorScheme': scheme})}"


def board_not_found(request: HttpRequest) -> HttpResponse:
    """No board here that this person may open (gone, or never theirs): one answer for
    both, so nobody learns which boards exist."""
    return render(request, "404.html", {"board": True}, status=404)


def refusal_page(request: HttpRequest, refused: KanbanError) -> HttpResponse:
    """A board page's refusal: a non-member learns nothing (404), a member is told why
    (403), on the product's own pages, in development too."""
    if refused.code == ErrorCode.FORBIDDEN:
        return render(request, "403.html", {"message": refused.message}, status=403)
    return board_not_found(request)


def page_refusals(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The view, with any refusal it raises answered by ``refusal_page``."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except KanbanError as refused:
            return refusal_page(request, refused)

    return wrapped


@require_GET
def plugin_file(request: HttpRequest, project_id: UUID, path: str) -> HttpResponse:
    if plugin_opened_at_top_level(request):
        return plugin_top_level_refusal(project_id)
    try:
        found = boards.plugin_file_for_page(project_id=project_id, path=path)
    except KanbanError:
        raise Http404("no such plugin file") from None
    if request.headers.get("If-None-Match") == f'"{found.sha256}"':
        response = HttpResponse(status=304)
    else:
        response = HttpResponse(bytes(found.content), content_type=found.content_type)
    # Every plugin response is sandboxed, so a plugin opened directly in a tab is too.
    response["Content-Security-Policy"] = plugin_csp(request, project_id)
    response["X-Content-Type-Options"] = "nosniff"
    response["ETag"] = f'"{found.sha256}"'
    response["Cache-Control"] = "no-cache"
    response["Referrer-Policy"] = "no-referrer"
    # Plugin files need no session and are anyone's to GET; the header only lets the
    # sandboxed (opaque-origin) page load its scripts with `crossorigin`, without which the
    # browser hides an uncaught error's text ("Script error.") from the board's panel.
    response["Access-Control-Allow-Origin"] = "*"
    if settings.KANBAN_PLUGIN_ORIGIN:
        # Framed by the boards' origin, which frame-ancestors names and SAMEORIGIN cannot.
        response.xframe_options_exempt = True
    else:
        response["X-Frame-Options"] = "SAMEORIGIN"
    return response
