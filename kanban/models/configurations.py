"""Named configurations: each user's own saved views of a kanban board.

Data only; the rules (names, values, who sees what, which one is active) live in
``kanban.data.configurations``.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from kanban.models.projects import Project


class Configuration(models.Model):
    id = models.UUIDField("UUID", primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="configurations"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="configurations")
    name = models.CharField(max_length=100)
    # Canonical JSON text from storage.jsoncodec rather than a JSONField: jsonb would reorder
    # the object's keys on PostgreSQL only, and the two backends must give back the same value.
    values_json = models.TextField("values", default="{}")
    # At most one per (user, project); none means the built-in default configuration.
    is_active = models.BooleanField("active", default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("user", "project", "name", "created_at")
        constraints = [
            models.UniqueConstraint(
                fields=("user", "project", "name"), name="kanban_configuration_name_unique"
            ),
            models.UniqueConstraint(
                fields=("user", "project"),
                condition=Q(is_active=True),
                name="kanban_configuration_one_active",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.user} on {self.project_id})"
