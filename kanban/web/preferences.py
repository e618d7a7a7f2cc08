"""A person's own settings for the host pages: the colour scheme (the top bar's Appearance
menu). A form that works without JavaScript (back to the page it came from) and answers
JSON to ``static/kanban/theme.js``, which applies the choice without a reload."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from kanban.accounts.preferences import color_scheme_set
from storage.errors import KanbanError


@login_required
@require_POST
def color_scheme(request: HttpRequest) -> HttpResponse:
    wants_json = "application/json" in request.headers.get("Accept", "")
    try:
        scheme = color_scheme_set(user=request.user, scheme=request.POST.get("scheme", ""))
    except KanbanError as refused:
        if wants_json:
            return JsonResponse({"code": refused.code, "message": refused.message}, status=400)
        return HttpResponse(refused.message, status=400, content_type="text/plain")
    if wants_json:
        return JsonResponse({"scheme": scheme})
    back = request.POST.get("next", "")
    safe = url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return redirect(back if safe and back.startswith("/") else "/")
