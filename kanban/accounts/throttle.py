"""Password guessing is bounded: after ``KANBAN_LOGIN_MAX_FAILURES`` failed sign-ins for one
username (or ten times that from one address) within ``KANBAN_LOGIN_WINDOW`` seconds,
every sign-in for it is refused until the window passes, the right password included.

The check lives in the authentication backend, so the login page, the admin's login and
anything else that calls ``authenticate`` are bounded alike. Counters are stored values
(``storage.namespaces.failed_sign_ins``), so every worker counts together.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest

from kanban.observability.metrics import LOGIN_LOCKS
from storage import engine
from storage.namespaces import failed_sign_ins
from storage.writes import delete_value, set_value

#: An address shared by many people (an office behind one NAT) gets more room.
PER_ADDRESS_FACTOR = 10


def _subjects(request: HttpRequest | None, username: object) -> dict[str, int]:
    """What failures are counted against, each with its limit: the username, the address."""
    limit = int(settings.KANBAN_LOGIN_MAX_FAILURES)
    name = hashlib.sha256(str(username).casefold().encode()).hexdigest()
    subjects = {f"user:{name}": limit}
    address = request.META.get("REMOTE_ADDR") if request is not None else None
    if address:
        subjects[f"address:{address}"] = limit * PER_ADDRESS_FACTOR
    return subjects


def _failures(subject: str, now: float) -> tuple[int, float]:
    """The failures counted in the current window, and when that window began."""
    stored = engine.get_value(failed_sign_ins(subject))
    if stored is None or now - stored.value["since"] > int(settings.KANBAN_LOGIN_WINDOW):
        return 0, now
    return int(stored.value["count"]), float(stored.value["since"])


def login_locked(request: HttpRequest | None, username: object) -> bool:
    now = time.time()
    subjects = _subjects(request, username).items()
    return any(_failures(subject, now)[0] >= limit for subject, limit in subjects)


def _record_failure(request: HttpRequest | None, username: object) -> None:
    now = time.time()
    writes = []
    for subject in _subjects(request, username):
        count, since = _failures(subject, now)
        writes.append(set_value(failed_sign_ins(subject), {"count": count + 1, "since": since}))
    engine.commit(writes)


class ThrottledModelBackend(ModelBackend):
    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if login_locked(request, username):
            LOGIN_LOCKS.inc()
            raise PermissionDenied("too many failed sign-ins")  # no other backend is tried
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            _record_failure(request, username)
        else:
            user_subject = next(iter(_subjects(request, username)))
            engine.commit([delete_value(failed_sign_ins(user_subject))])
        return user


class ThrottledAuthenticationForm(AuthenticationForm):
    """Says why a locked-out sign-in fails, instead of "wrong password"."""

    def get_invalid_login_error(self) -> ValidationError:
        if login_locked(self.request, self.cleaned_data.get("username")):
            minutes = max(1, int(settings.KANBAN_LOGIN_WINDOW) // 60)
            return ValidationError(
                f"Too many failed sign-ins for this account. Try again in {minutes} minutes.",
                code="rate_limited",
            )
        return super().get_invalid_login_error()
