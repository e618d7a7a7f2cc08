"""Invite links: an owner's way to bring a person onto a board with a role. Only a hash of
the link's secret is stored."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from kanban.models.projects import Role


class Invite(models.Model):
    project = models.ForeignKey("kanban.Project", on_delete=models.CASCADE, related_name="invites")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.GUEST)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invites_created"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    max_uses = models.PositiveIntegerField(default=1)
    uses = models.PositiveIntegerField(default=0)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.role} invite to {self.project_id}"
