"""API token services: create, authenticate, revoke."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.utils import timezone

from kanban.models.tokens import ApiToken

TOKEN_PREFIX = "kb_"  # noqa: S105 - a public marker, not a secret
#: Don't write last_used_at on every request; once a minute is plenty for an audit hint.
_TOUCH_INTERVAL = timedelta(minutes=1)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_create(*, user: Any, name: str = "") -> tuple[ApiToken, str]:
    """Return the stored token and its plaintext, which is never stored or shown again."""
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name, prefix=plaintext[:10], digest=_digest(plaintext)
    )
    return token, plaintext


def token_authenticate(*, plaintext: str) -> Any | None:
    """The active user owning an unrevoked token, or None."""
    if not plaintext.startswith(TOKEN_PREFIX) or len(plaintext) > 200:
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=_digest(plaintext), revoked_at__isnull=True)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > _TOUCH_INTERVAL:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


def token_revoke(*, token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
