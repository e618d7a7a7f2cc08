"""Creating users from the command line (and anything else that needs one)."""

from __future__ import annotations

import re
from typing import Final

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from storage.errors import ErrorCode, KanbanError, invalid_argument

#: Usernames are what people type and read to tell each other apart: ASCII letters, digits
#: and ``@.+-_`` only, so no look-alike (Cyrillic U+0430 for "a"), invisible (zero-width) or
#: reordering (right-to-left override) character can make one name pass for another.
#: Names in any script belong in the first and last name.
USERNAME_RE: Final = re.compile(r"[A-Za-z0-9@.+_-]{1,150}")


def check_username(username: object) -> str:
    """The username, or ``invalid_argument``; unique regardless of case (see
    ``user_create``)."""
    if not isinstance(username, str) or not USERNAME_RE.fullmatch(username):
        raise invalid_argument(
            "a username is 1 to 150 of the ASCII letters, digits and @ . + - _",
            field="username",
        )
    return username


def username_validator(value: str) -> None:
    """``check_username`` as a Django form validator (the admin's user forms)."""
    try:
        check_username(value)
    except KanbanError as error:
        raise ValidationError(error.message, code="invalid") from None


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
    username = check_username(username.strip())
    candidate = user_model(username=username, is_staff=is_staff or is_superuser)
    if password is not None:
        try:
            validate_password(password, user=candidate)
        except ValidationError as error:
            raise invalid_argument(" ".join(error.messages), field="password") from None
    manager = user_model.objects
    with transaction.atomic():
        if manager.filter(username__iexact=username).exists():
            raise KanbanError(
                ErrorCode.CONFLICT, f"user {username!r} already exists", field="username"
            )
        if is_superuser:
            return manager.create_superuser(username=username, password=password)
        return manager.create_user(username=username, password=password, is_staff=is_staff)
