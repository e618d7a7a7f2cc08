"""API tokens in the admin: listed with their owner and last use, revocable, never shown.

Tokens are created with ``manage.py create_token USERNAME`` (the plaintext is printed once);
only a digest is stored, so the admin can list and revoke but never reveal one.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from kanban.accounts.tokens import token_revoke
from kanban.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "user", "name", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("prefix", "name", "user__username")
    readonly_fields = ("user", "prefix", "created_at", "last_used_at", "revoked_at")
    fields = ("user", "name", "prefix", "created_at", "last_used_at", "revoked_at")
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a token's plaintext exists only in create_token's output

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        count = 0
        for token in queryset.filter(revoked_at__isnull=True):
            token_revoke(token=token)
            count += 1
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # revoke instead: keep the audit trail
        return actions
