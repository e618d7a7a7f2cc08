"""The account page's email settings (the address, and how notifications come by email) and
the unsubscribe link every notification mail carries, which works without signing in. The
services are ``kanban.accounts.email_notifications``; this parses and renders."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from kanban.accounts.email_notifications import (
    email_notifications_of,
    email_settings_set,
    unsubscribe,
    unsubscribe_check,
)
from kanban.models import EmailNotifications
from storage.errors import KanbanError

CHOICES = (
    (EmailNotifications.IMMEDIATELY, "Immediately: one email for each"),
    (EmailNotifications.DIGEST, "A daily digest: one email a day with all of them"),
    (EmailNotifications.OFF, "Off: the inbox only"),
)


@login_required
@never_cache
@require_http_methods(["GET", "POST"])
def account_email(request: HttpRequest) -> HttpResponse:
    error = ""
    if request.method == "POST":
        try:
            email_settings_set(
                user=request.user,
                email=request.POST.get("email", ""),
                choice=request.POST.get("email_notifications", ""),
            )
        except KanbanError as refused:
            error = refused.message
        else:
            return redirect(reverse("account-email") + "?saved=1")
    context = {
        "email": request.POST.get("email", getattr(request.user, "email", "")),
        "choice": request.POST.get(
            "email_notifications", email_notifications_of(user=request.user)
        ),
        "choices": CHOICES,
        "error": error,
        "saved": request.GET.get("saved") == "1",
        "email_enabled": settings.KANBAN_EMAIL_ENABLED,
    }
    return render(request, "kanban/account_email.html", context)


# The link is its own credential (signed for one person), and mail programs' one-click
# unsubscribe (RFC 8058) POSTs it with no cookie and no CSRF token.
@csrf_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def email_unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """GET asks (a link scanner opening it changes nothing); POST turns the mail off."""
    try:
        user = (
            unsubscribe(token=token) if request.method == "POST" else unsubscribe_check(token=token)
        )
    except KanbanError as refused:
        return render(request, "kanban/unsubscribe.html", {"problem": refused.message}, status=400)
    return render(
        request,
        "kanban/unsubscribe.html",
        {"username": user.get_username(), "done": request.method == "POST"},
    )
