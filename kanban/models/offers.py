"""A membership offered to a person by username: it grants nothing until they accept it, so
nobody is put on a board (and reached through it) without saying yes."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from kanban.models.projects import Role


class MembershipOffer(models.Model):
    project = models.ForeignKey("kanban.Project", on_delete=models.CASCADE, related_name="offers")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="membership_offers"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.GUEST)
    #: The owner who offered it; accepting checks they still own the board.
    offered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="membership_offers_made",
    )
    created_at = models.DateTimeField(default=timezone.now)
    #: Set when the person says no: the row stays a while so the board cannot ask again at
    #: once (declining would otherwise be a loop the owner restarts at will).
    declined_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="kanban_offer_once"),
        ]

    def __str__(self) -> str:
        return f"{self.role} of {self.project_id} offered to {self.user_id}"
