"""Django's user admin, with an access-changed event when a change can alter what the user
may reach."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from kanban.access.events import publish_access_changed
from kanban.accounts.users import username_validator

_ACCESS_FIELDS: Sequence[str] = ("is_active", "is_superuser")
User = get_user_model()


class _UsernameRule:
    """The admin's user forms check usernames as ``adduser`` does (kanban.accounts.users)."""

    def clean_username(self: Any) -> str:
        username = str(self.cleaned_data["username"])
        username_validator(username)
        taken = User.objects.filter(username__iexact=username).exclude(pk=self.instance.pk)
        if taken.exists():
            raise ValidationError("A user with that username already exists.", code="unique")
        return username


class CheckedUserCreationForm(_UsernameRule, AdminUserCreationForm):
    pass


class CheckedUserChangeForm(_UsernameRule, UserChangeForm):
    pass


class AccessAwareUserAdmin(UserAdmin):
    """Django's user admin, plus an access-changed event when a change can alter what the
    user may reach (deactivation, superuser status, deletion), and the product's username
    rule."""

    add_form = CheckedUserCreationForm
    form = CheckedUserChangeForm

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if change and any(name in form.changed_data for name in _ACCESS_FIELDS):
            publish_access_changed(user_ids={obj.pk})

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        user_id = obj.pk
        super().delete_model(request, obj)
        publish_access_changed(user_ids={user_id})

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        user_ids = set(queryset.values_list("pk", flat=True))
        super().delete_queryset(request, queryset)
        publish_access_changed(user_ids=user_ids)


if admin.site.is_registered(User):
    admin.site.unregister(User)
admin.site.register(User, AccessAwareUserAdmin)
