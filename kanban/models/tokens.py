"""API tokens for programs (the "Server connection") and agents (MCP). Only a hash is stored.

A token acts as its user, whose role still applies. A *scoped* token narrows that: one
project (and the projects it reaches by alias), read-only or read-write, until it expires.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class TokenScope(models.TextChoices):
    READ = "read", "Read"
    WRITE = "write", "Read and write"
    #: Reads and writes over MCP only (an agent's token): REST refuses it.
    MCP = "mcp", "MCP (agents)"


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    #: The first characters of the token, shown so people can tell tokens apart.
    prefix = models.CharField(max_length=12, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    #: The one project the token reaches (with its aliases); blank: every project of the user.
    project = models.ForeignKey(
        "kanban.Project",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="api_tokens",
    )
    #: Further boards a token chosen for several reaches beside ``project`` (REST only: an
    #: MCP token names one board).
    more_projects = models.ManyToManyField(
        "kanban.Project", blank=True, related_name="api_tokens_too"
    )
    scope = models.CharField(max_length=8, choices=TokenScope.choices, default=TokenScope.WRITE)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API token"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(scope__in=TokenScope.values), name="kanban_token_scope_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"
