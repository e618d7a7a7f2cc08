"""API token services: create, authenticate, scope, revoke.

A token acts as its user. A scoped one also names a project (its aliases included), may be
read-only, and may expire; ``access_token_scope`` is the one check of that, used by REST and
by MCP alike, on top of the user's own role. An ``mcp`` token reads and writes over MCP
only: REST refuses it (``token_for_rest``), so an agent's token is no script's key.

People make and revoke their own on their account page (``kanban.web.tokens``); staff in
Django admin; operators with ``manage.py create_token``. All three call ``token_create``.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Final
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from kanban.models import Membership, Project
from kanban.models.tokens import ApiToken, TokenScope
from storage.errors import ErrorCode, KanbanError, invalid_argument

TOKEN_PREFIX = "kb_"  # noqa: S105 - a public marker, not a secret
#: Don't write last_used_at on every request; once a minute is plenty for an audit hint.
_TOUCH_INTERVAL = timedelta(minutes=1)
_DURATION: Final = re.compile(r"([1-9][0-9]{0,5})([smhd])")
_UNITS: Final = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
MAX_LIFETIME: Final = timedelta(days=366)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_duration(text: object) -> timedelta:
    """``30m``, ``1h``, ``7d`` (seconds, minutes, hours, days), at most a year."""
    found = _DURATION.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        raise invalid_argument(
            f"a lifetime is a number and s, m, h or d (e.g. 1h), not {text!r}", field="expires"
        )
    lifetime = timedelta(**{_UNITS[found.group(2)]: int(found.group(1))})
    if lifetime > MAX_LIFETIME:
        raise invalid_argument("a token lives at most a year", field="expires")
    return lifetime


def check_scope(scope: object) -> TokenScope:
    if not isinstance(scope, str) or scope not in TokenScope.values:
        raise invalid_argument(f"scope must be read, write or mcp, not {scope!r}", field="scope")
    return TokenScope(scope)


def check_token_project(*, user: Any, project_id: UUID | None) -> Project | None:
    """The project a token of ``user`` may be scoped to: one they are on."""
    if project_id is None:
        return None
    project = Project.objects.filter(pk=project_id).first()
    member = Membership.objects.filter(user_id=user.pk, project=project).exists()
    if project is None or not (member or user.is_superuser):
        raise KanbanError(ErrorCode.NOT_FOUND, f"{user} is not on a project {project_id}")
    return project


def token_create(
    *,
    user: Any,
    name: str = "",
    project_id: UUID | None = None,
    more_project_ids: Sequence[UUID] = (),
    scope: str = TokenScope.WRITE,
    lifetime: timedelta | None = None,
) -> tuple[ApiToken, str]:
    """Return the stored token and its plaintext, which is never stored or shown again.
    A token scoped to projects (``project_id``, and ``more_project_ids`` beside it) needs the
    user to be a member of each (or a superuser); an MCP token names one."""
    checked_scope = check_scope(scope)
    project = check_token_project(user=user, project_id=project_id)
    more = [
        found
        for other in dict.fromkeys(more_project_ids)
        if other != project_id
        and (found := check_token_project(user=user, project_id=other)) is not None
    ]
    if more and project is None:
        raise invalid_argument("a token for several boards names its first one", field="board")
    if more and checked_scope == TokenScope.MCP:
        raise invalid_argument("an MCP token names one board", field="board")
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user,
            name=name,
            prefix=plaintext[:10],
            digest=_digest(plaintext),
            project=project,
            scope=checked_scope,
            expires_at=None if lifetime is None else timezone.now() + lifetime,
        )
        token.more_projects.set(more)
    return token, plaintext


def token_authenticate(*, plaintext: str) -> ApiToken | None:
    """The unrevoked, unexpired token of an active user (``token.user``), or None."""
    if not plaintext.startswith(TOKEN_PREFIX) or len(plaintext) > 200:
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=_digest(plaintext), revoked_at__isnull=True)
        .first()
    )
    now = timezone.now()
    if token is None or not token.user.is_active:
        return None
    if token.expires_at is not None and token.expires_at <= now:
        return None
    if token.last_used_at is None or now - token.last_used_at > _TOUCH_INTERVAL:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def token_from_authorization(header: bytes | str) -> ApiToken | None:
    """The token an ``Authorization`` header carries: None when it is not ``Bearer``
    (other schemes fall through, to the session on REST); ``unauthenticated`` when it is
    but the token is malformed, unknown, expired or revoked. REST and MCP both read the
    header here, so they agree on every malformed one."""
    raw = header.encode("latin-1") if isinstance(header, str) else header
    parts = raw.split()
    if not parts or parts[0].lower() != b"bearer":
        return None
    if len(parts) != 2:
        raise KanbanError(ErrorCode.UNAUTHENTICATED, "malformed Authorization header")
    try:
        plaintext = parts[1].decode("ascii")
    except UnicodeDecodeError:
        raise KanbanError(ErrorCode.UNAUTHENTICATED, "malformed bearer token") from None
    token = token_authenticate(plaintext=plaintext)
    if token is None:
        raise KanbanError(ErrorCode.UNAUTHENTICATED, "invalid, expired or revoked token")
    return token


def token_for_rest(token: ApiToken) -> ApiToken:
    """The token, when REST takes it: an ``mcp`` token is for MCP only."""
    if token.scope == TokenScope.MCP:
        raise KanbanError(
            ErrorCode.FORBIDDEN, "this token is for MCP only; make a read or write one"
        )
    return token


def access_token_scope(*, token: ApiToken, project_id: UUID | None, write: bool) -> None:
    """Refuse what the token's scope leaves out: another project than its own (``not_found``,
    as for a project the user cannot see; ``project_id`` None is a call naming no project,
    such as listing or creating projects) and, for a read-only token, any write."""
    if (
        token.project_id is not None
        and project_id != token.project_id
        and (project_id is None or not token.more_projects.filter(pk=project_id).exists())
    ):
        raise KanbanError(ErrorCode.NOT_FOUND, "this token reaches only its own projects")
    if write and token.scope == TokenScope.READ:
        raise KanbanError(ErrorCode.FORBIDDEN, "this token is read-only")


def token_projects(token: ApiToken) -> frozenset[UUID] | None:
    """The projects a scoped token reaches (``access_token_scope``'s own list); None for an
    unscoped one, which reaches what its user does."""
    if token.project_id is None:
        return None
    return frozenset([token.project_id, *token.more_projects.values_list("pk", flat=True)])


def token_revoke(*, token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


def token_revoke_plaintext(*, plaintext: str) -> bool:
    """Revoke the token with this plaintext; whether a live one was found."""
    return bool(
        ApiToken.objects.filter(digest=_digest(plaintext.strip()), revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
    )


def tokens_of(*, user: Any) -> list[ApiToken]:
    """A person's tokens that still work or could (expired ones too, so they see why one
    stopped); revoked ones are gone from the list."""
    return list(
        ApiToken.objects.filter(user_id=user.pk, revoked_at__isnull=True)
        .select_related("project")
        .prefetch_related("more_projects")
    )


def token_revoke_own(*, user: Any, token_id: object) -> ApiToken:
    """Revoke one of ``user``'s own tokens; the next request with it is refused, on every
    worker (each request looks its token up again)."""
    token = None
    if isinstance(token_id, int) or (
        isinstance(token_id, str) and token_id.isdigit() and len(token_id) <= 18
    ):
        token = ApiToken.objects.filter(
            pk=int(token_id), user_id=user.pk, revoked_at__isnull=True
        ).first()
    if token is None:
        raise KanbanError(ErrorCode.NOT_FOUND, "no such token of yours")
    token_revoke(token=token)
    return token
