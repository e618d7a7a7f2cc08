"""Who is on a bridge socket: the user of the session cookie, read once at the handshake.

Channels' ``AuthMiddlewareStack`` does the same lookup, but it also wraps the socket's
``send`` so that every outgoing frame checks whether the session changed and needs saving
(a quarter of each send in a 1,000-subscriber fan-out), and it keeps lazy wrappers alive
for the socket's lifetime. A websocket never writes the session, so this middleware reads
it once, in one thread hop, through Django's own ``get_user`` (the session-hash check that
logs a user out everywhere after a password change included), and leaves ``send`` alone.
"""

from __future__ import annotations

import logging
from importlib import import_module
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.contrib import auth
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.base import SessionBase
from django.db import DatabaseError
from django.http.cookie import parse_cookie

from kanban.bridge import frames
from kanban.bridge.threads import in_thread

logger = logging.getLogger(__name__)


def session_user(*, cookie_header: str) -> tuple[SessionBase | None, Any]:
    """The session named by the request's cookies and its user (``AnonymousUser`` when
    there is no cookie, the session expired, or its user is gone or inactive)."""
    return session_user_of(
        session_key=parse_cookie(cookie_header).get(settings.SESSION_COOKIE_NAME)
    )


def session_user_of(*, session_key: str | None) -> tuple[SessionBase | None, Any]:
    """The session and its user, as Django decides it for a request: through the configured
    session engine, with the check that a changed password ends every session."""
    if not session_key:
        return None, AnonymousUser()
    session = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    return session, auth.get_user(SimpleNamespace(session=session))  # type: ignore[arg-type]


class SessionAuthMiddleware:
    """Sets ``scope["session_key"]`` and ``scope["user"]`` for a websocket. The socket
    keeps the key alone, not the session read through it: a re-check reads the session
    again (its user may have changed their password since), and an idle socket holds less."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        # This frame lives as long as the socket: it holds the key and the user, never the
        # headers or the session.
        try:
            key, user = await in_thread(_handshake_user)(headers=scope.get("headers") or [])
        except DatabaseError:
            logger.warning("bridge connect could not read the session", exc_info=True)
            return await try_again_later(receive, send)
        return await self.app({**scope, "session_key": key, "user": user}, receive, send)


def _handshake_user(*, headers: list[tuple[bytes, bytes]]) -> tuple[str | None, Any]:
    cookie_header = dict(headers).get(b"cookie", b"").decode("latin-1")
    session, user = session_user(cookie_header=cookie_header)
    return (None if session is None else session.session_key), user


async def try_again_later(receive: Any, send: Any) -> None:
    """Complete the handshake only to close it with 4013, which a client retries; refusing
    the handshake would look like a 403."""
    if (await receive())["type"] == "websocket.connect":
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.close", "code": frames.CLOSE_TRY_AGAIN_LATER})
