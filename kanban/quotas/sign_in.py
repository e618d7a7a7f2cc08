"""Password guessing is bounded, across every worker, without locking the owner out.

Each sign-in attempt is counted *before* its password is checked, atomically (one lock,
read, write), so N parallel guesses over any number of workers get at most the limit of
real password checks. Within ``KANBAN_LOGIN_WINDOW`` seconds an attempt is refused, its
password unchecked, once any of these reaches its limit:

- the account, from addresses that have never signed in as it: ``KANBAN_LOGIN_MAX_FAILURES``;
- the account from this one address: the same limit;
- this address, whatever the account: ten times it (an office behind one NAT).

An address that has signed in as the account before (within ``KNOWN_FOR``) is not held to
the account's count, only to its own: an attacker guessing from elsewhere locks new
addresses out of the account, never its owner's usual one. A success clears the count of
the account from that address (and the account's, when that count applied); it takes its
own attempt back from the address's count.

The check lives in the authentication backend, so the login page, the admin's login and
anything else that calls ``authenticate`` are bounded alike. The address is the one
``kanban.quotas.client_address`` trusts.

Accounts made through invite links are bounded the same way (``sign_up_admit``), per day:
through one inviter's links, and from one address. Both counts live in the database every
worker shares, so they hold for the deployment, and are taken in the transaction that makes
the account: a sign-up refused for any reason counts nothing.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import HttpRequest

from kanban.observability.metrics import LOGIN_LOCKS
from kanban.quotas.client_address import client_address
from storage import engine
from storage.errors import ErrorCode, KanbanError
from storage.namespaces import (
    FAILED_SIGN_INS,
    INVITE_SIGN_UPS,
    failed_sign_ins,
    invite_sign_ups,
    known_sign_in_address,
)
from storage.writes import Write, delete_value, set_value

#: An address shared by many people (an office behind one NAT) gets more room.
PER_ADDRESS_FACTOR = 10
#: Marks a request whose sign-in was refused unchecked.
REFUSED = "kanban.login_refused"
#: How long a successful sign-in from an address vouches for it.
KNOWN_FOR = 90 * 24 * 3600


@dataclass(frozen=True)
class Attempt:
    account: str  # hashed username
    address: str | None
    known: bool  # this address has signed in as this account before

    @property
    def counters(self) -> dict[str, int]:
        """What this attempt counts against, each with its limit."""
        limit = int(settings.KANBAN_LOGIN_MAX_FAILURES)
        counters = {} if self.known else {f"user:{self.account}": limit}
        if self.address:
            counters[f"pair:{_digest(self.account, self.address)}"] = limit
            counters[f"address:{self.address}"] = limit * PER_ADDRESS_FACTOR
        return counters


def _digest(*parts: str) -> str:
    return hashlib.sha256(":".join(parts).encode()).hexdigest()


def _attempt(request: HttpRequest | None, username: object) -> Attempt:
    account = _digest(str(username).casefold())
    address = client_address(request) if request is not None else None
    known = False
    if address:
        stored = engine.get_value(known_sign_in_address(_digest(account, address)))
        known = stored is not None and time.time() - float(stored.value["at"]) < KNOWN_FOR
    return Attempt(account, address, known)


def _count(counter: str, now: float) -> tuple[int, float]:
    """The attempts counted in the current window, and when that window began."""
    stored = engine.get_value(failed_sign_ins(counter))
    if stored is None or now - stored.value["since"] > int(settings.KANBAN_LOGIN_WINDOW):
        return 0, now
    return int(stored.value["count"]), float(stored.value["since"])


def _locked(counters: dict[str, int], now: float) -> bool:
    return any(_count(counter, now)[0] >= limit for counter, limit in counters.items())


def _admit(attempt: Attempt) -> bool:
    """Count the attempt against each of its counters, or refuse it when one is full."""
    return _admit_counted(attempt.counters)


def _admit_counted(counters: dict[str, int]) -> bool:
    now = time.time()
    with transaction.atomic():
        engine.lock_namespace(FAILED_SIGN_INS)  # every worker's attempts, one at a time
        if _locked(counters, now):
            return False
        writes = []
        for counter in counters:
            count, since = _count(counter, now)
            writes.append(set_value(failed_sign_ins(counter), {"count": count + 1, "since": since}))
        engine.commit(writes)
    return True


def _signed_in(attempt: Attempt) -> None:
    now = time.time()
    with transaction.atomic():
        engine.lock_namespace(FAILED_SIGN_INS)
        writes: list[Write] = []
        for counter in attempt.counters:
            count, since = _count(counter, now)
            if counter.startswith("address:") and count > 1:
                value = {"count": count - 1, "since": since}
                writes.append(set_value(failed_sign_ins(counter), value))
            else:
                writes.append(delete_value(failed_sign_ins(counter)))
        if attempt.address:
            known = known_sign_in_address(_digest(attempt.account, attempt.address))
            writes.append(set_value(known, {"at": now}))
        engine.commit(writes)


class ThrottledModelBackend(ModelBackend):
    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        attempt = _attempt(request, username)
        if not _admit(attempt):
            LOGIN_LOCKS.inc()
            if request is not None:
                request.META[REFUSED] = True  # for the form's message
            raise PermissionDenied("too many failed sign-ins")  # no other backend is tried
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None:
            _signed_in(attempt)
        return user


class ThrottledAuthenticationForm(AuthenticationForm):
    """Says why a refused sign-in fails: its password was never checked, and "wrong
    password" would send the owner looking for a typo."""

    def get_invalid_login_error(self) -> ValidationError:
        if self.request is not None and self.request.META.get(REFUSED):
            minutes = max(1, int(settings.KANBAN_LOGIN_WINDOW) // 60)
            return ValidationError(
                f"Too many failed sign-ins for this account. Try again in {minutes} minutes.",
                code="rate_limited",
            )
        return super().get_invalid_login_error()


# Password reset requests ----------------------------------------------------------------

#: Reset mails one mailbox may be sent within the sign-in window: enough for a lost first
#: mail, too few to flood someone's inbox through this form.
RESET_MAILS_PER_MAILBOX = 3


def password_reset_admit(*, request: HttpRequest | None, email: str) -> None:
    """Counts one "forgot password" request, like a sign-in attempt (the same counters,
    window and lock across workers): at most ``RESET_MAILS_PER_MAILBOX`` for one mailbox and
    ``KANBAN_LOGIN_MAX_FAILURES`` from one address within ``KANBAN_LOGIN_WINDOW``; past
    either, ``rate_limited`` and no mail. Counted whether or not an account has that
    address, so the answer tells nobody which addresses are known."""
    counters = {f"reset:{_digest(email.strip().casefold())}": RESET_MAILS_PER_MAILBOX}
    address = client_address(request) if request is not None else None
    if address:
        counters[f"reset-address:{address}"] = int(settings.KANBAN_LOGIN_MAX_FAILURES)
    if not _admit_counted(counters):
        minutes = max(1, int(settings.KANBAN_LOGIN_WINDOW) // 60)
        raise KanbanError(
            ErrorCode.RATE_LIMITED,
            f"Too many password reset requests. Try again in {minutes} minutes.",
        )


# Sign-ups through invite links ----------------------------------------------------------

#: The sign-up limits' day, in seconds; it starts at the first sign-up counted.
SIGN_UP_WINDOW = 24 * 3600


def _wait(seconds: float) -> str:
    if seconds > 3600:
        hours = math.ceil(seconds / 3600)
        return f"{hours} hours" if hours > 1 else "1 hour"
    minutes = max(1, math.ceil(seconds / 60))
    return f"{minutes} minutes" if minutes > 1 else "1 minute"


def sign_up_admit(*, inviter: Any, address: str | None) -> None:
    """Count one account made through ``inviter``'s link from ``address``, or refuse it
    with ``rate_limited`` saying when to try again. Must run inside the transaction that
    makes the account: every worker's sign-ups then wait for one another (one lock), and a
    sign-up that fails later rolls its count back with it."""
    subjects = {
        f"inviter:{inviter.pk}": (
            int(settings.KANBAN_INVITE_SIGNUPS_PER_INVITER_DAY),
            f"through @{inviter.get_username()}'s invite links",
        )
    }
    if address:
        limit = int(settings.KANBAN_INVITE_SIGNUPS_PER_ADDRESS_DAY)
        subjects[f"address:{address}"] = (limit, "from your address")
    now = time.time()
    engine.lock_namespace(INVITE_SIGN_UPS)
    writes = []
    for subject, (limit, where) in subjects.items():
        stored = engine.get_value(invite_sign_ups(subject))
        count, since = 0, now
        if stored is not None and now - float(stored.value["since"]) < SIGN_UP_WINDOW:
            count, since = int(stored.value["count"]), float(stored.value["since"])
        if count >= limit:
            left = since + SIGN_UP_WINDOW - now
            raise KanbanError(
                ErrorCode.RATE_LIMITED,
                f"Too many accounts were made {where} today. Try again in {_wait(left)}.",
                retryAfter=math.ceil(left),
            )
        writes.append(set_value(invite_sign_ups(subject), {"count": count + 1, "since": since}))
    engine.commit(writes)
