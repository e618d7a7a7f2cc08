"""A person's inbox: what someone on a board asked them to see (a mention, an assignment,
a plugin's notice), with a link to the card it is about."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Notification(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    project = models.ForeignKey(
        "kanban.Project", on_delete=models.CASCADE, related_name="notifications"
    )
    #: Who caused it; kept when they leave (their name is part of what happened).
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="notifications_sent",
    )
    text = models.CharField(max_length=500)
    #: The card (or other thing of the plugin's) it is about: a link opens it.
    card = models.CharField(max_length=64, blank=True)
    via = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["user", "read_at"]),
            models.Index(fields=["actor", "created_at"]),
        ]

    def __str__(self) -> str:
        return f"to {self.user_id}: {self.text[:40]}"
