"""A person's own settings for the host pages (not a board's): how the pages look, and how
they hear of notifications by email."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class ColorScheme(models.TextChoices):
    #: Follow the device (``prefers-color-scheme``).
    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


class EmailNotifications(models.TextChoices):
    """How a person hears of their notifications (mentions, assignments, a plugin's notice)
    by email, beside the inbox."""

    IMMEDIATELY = "immediately"
    DIGEST = "digest"
    OFF = "off"


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
    email_notifications = models.CharField(
        max_length=12, choices=EmailNotifications.choices, default=EmailNotifications.IMMEDIATELY
    )
    #: The digest covered notifications up to this time (none sent yet: since the choice).
    digest_through = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(color_scheme__in=ColorScheme.values),
                name="kanban_preference_color_scheme_valid",
            ),
            models.CheckConstraint(
                condition=Q(email_notifications__in=EmailNotifications.values),
                name="kanban_preference_email_notifications_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.color_scheme}"
