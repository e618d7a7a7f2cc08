"""A person's own settings for the host pages (not a board's): how the pages look."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class ColorScheme(models.TextChoices):
    #: Follow the device (``prefers-color-scheme``).
    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


class Preference(models.Model):
    """One row per person who changed a setting; nobody has one until then (the defaults)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="kanban_preference",
    )
    color_scheme = models.CharField(
        max_length=8, choices=ColorScheme.choices, default=ColorScheme.SYSTEM
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(color_scheme__in=ColorScheme.values),
                name="kanban_preference_color_scheme_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.color_scheme}"
