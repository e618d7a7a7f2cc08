"""Forgotten passwords, with Django's own views: the request form is throttled like sign-in
(kanban/quotas/sign_in.py) and its mail leaves through the queue (kanban/jobs/email.py),
as every mail does. Where this server sends no email, the page says to ask an administrator.

The link is Django's token: it stops working once the password changes (so once used) or
after ``PASSWORD_RESET_TIMEOUT``, and the new password ends every other session, whose
stored hash of the old password no longer matches."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.views import PasswordResetView
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render

from kanban.quotas.sign_in import password_reset_admit
from storage.errors import KanbanError


class PasswordResetRequest(PasswordResetView):
    template_name = "registration/password_reset_form.html"
    email_template_name = "registration/password_reset_email.txt"
    html_email_template_name = "registration/password_reset_email.html"
    subject_template_name = "registration/password_reset_subject.txt"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not settings.KANBAN_EMAIL_ENABLED:
            return render(request, "registration/password_reset_unavailable.html")
        return super().dispatch(request, *args, **kwargs)

    def form_valid(self, form: PasswordResetForm) -> HttpResponse:
        self.extra_email_context = {"valid_for": _duration(settings.PASSWORD_RESET_TIMEOUT)}
        try:
            password_reset_admit(request=self.request, email=form.cleaned_data["email"])
        except KanbanError as refused:
            form.add_error(None, refused.message)
            return self.form_invalid(form)
        return super().form_valid(form)


def _duration(seconds: int) -> str:
    hours = int(seconds) // 3600
    if hours >= 48:
        return f"{hours // 24} days"
    if hours >= 2:
        return f"{hours} hours"
    return f"{max(1, int(seconds) // 60)} minutes"
