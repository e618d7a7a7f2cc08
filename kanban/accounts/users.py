"""Creating users from the command line (and anything else that needs one)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from storage.errors import ErrorCode, KanbanError, invalid_argument


def user_create(
    *,
    username: str,
    password: str | None,
    is_staff: bool = False,
    is_superuser: bool = False,
) -> AbstractBaseUser:
    """Create an active user. ``password`` None leaves the user without a usable password
    (e.g. a program that signs in with a token only); otherwise it must pass the
    configured password validators."""
    user_model = get_user_model()
    username = username.strip()
    if not username:
        raise invalid_argument("username must not be empty", field="username")
    candidate = user_model(username=username, is_staff=is_staff or is_superuser)
    if password is not None:
        try:
            validate_password(password, user=candidate)
        except ValidationError as error:
            raise invalid_argument(" ".join(error.messages), field="password") from None
    manager = user_model.objects
    with transaction.atomic():
        if manager.filter(username=username).exists():
            raise KanbanError(
                ErrorCode.CONFLICT, f"user {username!r} already exists", field="username"
            )
        if is_superuser:
            return manager.create_superuser(username=username, password=password)
        return manager.create_user(username=username, password=password, is_staff=is_staff)
