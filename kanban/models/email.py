"""Outgoing mail: each message Django was asked to send, kept until the background worker
has handed it to the mail server, with every attempt's answer for staff to read.

A row, not only django-tasks' result: the result says a task ran, not what the mail server
answered, and a mail that failed for good must stay (nothing lost) to be sent again."""

from __future__ import annotations

from django.db import models


class EmailStatus(models.TextChoices):
    QUEUED = "queued"
    SENDING = "sending"
    SENT = "sent"
    FAILED = "failed"


class OutgoingEmail(models.Model):
    from_email = models.CharField(max_length=320)
    to = models.JSONField(default=list)
    cc = models.JSONField(default=list, blank=True)
    bcc = models.JSONField(default=list, blank=True)
    reply_to = models.JSONField(default=list, blank=True)
    subject = models.CharField(max_length=998)
    #: The text and HTML bodies, emptied once sent: a reset link in them opens an account.
    body = models.TextField(blank=True)
    html = models.TextField(blank=True)
    headers = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=16, choices=EmailStatus.choices, default=EmailStatus.QUEUED, db_index=True
    )
    #: Runs in the current round (an admin's "send again" starts a new one).
    attempts = models.PositiveSmallIntegerField(default=0)
    #: The mail server's last answer to a failed run (code and text), or what stopped it.
    last_error = models.TextField(blank=True)
    #: Every run: ``{"at": ISO time, "ok": bool, "answer": text}``, oldest first.
    log = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "outgoing email"

    def __str__(self) -> str:
        return f"{self.subject[:60]} to {', '.join(self.to)[:60]}"
