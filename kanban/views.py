"""Plain HTML views. Each parses the request, calls one service and renders."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness plus a database round trip, for load balancers and compose healthchecks."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        return JsonResponse({"status": "unavailable", "database": "down"}, status=503)
    return JsonResponse({"status": "ok", "database": connection.vendor})


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    return render(request, "kanban/dashboard.html", {"boards": []})
