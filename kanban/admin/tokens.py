"""API tokens in the admin: created (the plaintext shown once, in the confirmation
message), listed with their owner, scope and last use, revocable, never shown again.

Only a digest is stored, so the admin can list and revoke but never reveal one. ``manage.py
create_token`` makes the same tokens from the command line.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest
from django.utils import timezone

from kanban.accounts.tokens import check_token_project, token_create, token_revoke
from kanban.models import ApiToken
from storage.errors import KanbanError

ADD_FIELDS = ("user", "name", "project", "scope", "expires_at")
#: What an issued token shows, none of it editable but its name.
SHOWN = (
    "user",
    "prefix",
    "project",
    "scope",
    "expires_at",
    "created_at",
    "last_used_at",
    "revoked_at",
)


class ApiTokenAddForm(ModelForm):
    class Meta:
        model = ApiToken
        fields = ADD_FIELDS

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("user") is not None and data.get("project") is not None:
            try:
                check_token_project(user=data["user"], project_id=data["project"].pk)
            except KanbanError as error:
                self.add_error("project", error.message)
        expires = data.get("expires_at")
        if expires is not None and expires <= timezone.now():
            self.add_error("expires_at", "an expiry is in the future")
        return data


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = (
        "prefix",
        "user",
        "name",
        "project",
        "scope",
        "expires_at",
        "last_used_at",
        "revoked_at",
    )
    list_filter = ("scope", "revoked_at")
    search_fields = ("prefix", "name", "user__username")
    actions = ["revoke"]

    def get_form(
        self, request: HttpRequest, obj: ApiToken | None = None, change: bool = False, **kwargs: Any
    ) -> Any:
        if obj is None:
            kwargs["form"] = ApiTokenAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> Any:
        return list(ADD_FIELDS if obj is None else ("name", *SHOWN))

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> Any:
        return [] if obj is None else list(SHOWN)

    def save_model(
        self, request: HttpRequest, obj: ApiToken, form: ModelForm, change: bool
    ) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        lifetime = None if obj.expires_at is None else obj.expires_at - timezone.now()
        token, plaintext = token_create(
            user=obj.user,
            name=obj.name,
            project_id=obj.project_id,
            scope=obj.scope,
            lifetime=lifetime,
        )
        obj.pk, obj.prefix, obj.digest = token.pk, token.prefix, token.digest
        self.message_user(
            request,
            f"The new token is {plaintext} — copy it now: it is not stored and will not be "
            "shown again.",
            messages.WARNING,
        )

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
