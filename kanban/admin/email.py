"""Outgoing mail in the admin: what was sent, what waits and what failed, with each run's
answer from the mail server; "Send again" for failed mail and "Send a test email".

Nothing here is editable, and a mail's words are not shown: a password reset link in them
would let anyone who reads the admin into that account."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join

from kanban.jobs.email import email_send_again, email_test
from kanban.models import OutgoingEmail
from storage.errors import KanbanError

SHOWN = (
    "subject",
    "recipients",
    "from_email",
    "status",
    "attempts",
    "last_error",
    "runs",
    "created_at",
    "next_attempt_at",
    "sent_at",
)


@admin.register(OutgoingEmail)
class OutgoingEmailAdmin(admin.ModelAdmin):
    list_display = ("created_at", "recipients", "subject", "status", "attempts", "last_error")
    list_filter = ("status",)
    search_fields = ("subject", "to", "last_error")
    fields = SHOWN
    readonly_fields = SHOWN
    actions = ["send_again"]
    change_list_template = "admin/kanban/outgoingemail/change_list.html"

    @admin.display(description="to")
    def recipients(self, email: OutgoingEmail) -> str:
        return ", ".join([*email.to, *email.cc, *email.bcc])

    @admin.display(description="runs")
    def runs(self, email: OutgoingEmail) -> str:
        return format_html(
            "<ol>{}</ol>",
            format_html_join(
                "",
                "<li>{} — {}</li>",
                ((entry.get("at", ""), entry.get("answer", "")) for entry in email.log),
            ),
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description="Send the selected failed emails again")
    def send_again(self, request: HttpRequest, queryset: QuerySet[OutgoingEmail]) -> None:
        if not request.user.has_perm("kanban.change_outgoingemail"):
            raise PermissionDenied
        count = email_send_again(email_ids=list(queryset.values_list("id", flat=True)))
        self.message_user(request, f"Queued {count} failed email(s) again.", messages.SUCCESS)

    def get_urls(self) -> list[URLPattern]:
        test = path(
            "test/",
            self.admin_site.admin_view(self.send_test),
            name="kanban_outgoingemail_test",
        )
        return [test, *super().get_urls()]

    def send_test(self, request: HttpRequest) -> HttpResponse:
        """A form with one address (yours by default); the mail goes the way every mail does."""
        if not request.user.has_perm("kanban.change_outgoingemail"):
            raise PermissionDenied
        to = request.POST.get("to", "").strip() or getattr(request.user, "email", "")
        error = ""
        if request.method == "POST":
            try:
                email = email_test(to=to)
            except KanbanError as refused:
                error = refused.message
            else:
                self.message_user(
                    request,
                    f"A test email to {to} is queued; its row shows when it is sent, or what "
                    "the mail server answered.",
                    messages.SUCCESS,
                )
                return redirect(reverse("admin:kanban_outgoingemail_change", args=[email.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Send a test email",
            "opts": self.model._meta,
            "to": to,
            "error": error,
        }
        return TemplateResponse(request, "admin/kanban/outgoingemail/test.html", context)
