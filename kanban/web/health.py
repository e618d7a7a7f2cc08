"""Probes: ``/healthz`` says this worker lives (it answers, its database answers) and whether
Redis answers, ``/readyz`` whether it can serve everyone fully, Redis included.

Two, because they drive different things. A worker whose Redis is away still serves (each
board live for the people on this worker, limits counted per worker) and restarting it
would not bring Redis back: liveness stays 200 and compose restarts on it. Readiness is
503 then, for a balancer or an alert that wants workers that reach everything."""

from __future__ import annotations

from typing import Final

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

#: A probe answers within a balancer's patience even when Redis hangs.
REDIS_TIMEOUT: Final = 1.0


def _database() -> str | None:
    """The vendor when the database answers a round trip, None otherwise."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        return None
    return connection.vendor


def _redis() -> str:
    """``ok``, ``down``, or ``unused`` on the embedded default (no REDIS_URL)."""
    if not settings.REDIS_URL:
        return "unused"
    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
    )
    try:
        return "ok" if client.ping() else "down"
    except (redis.RedisError, OSError):
        return "down"
    finally:
        client.close()


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: a database round trip, and what Redis answered (its absence is no death)."""
    database = _database()
    if database is None:
        return JsonResponse({"status": "unavailable", "database": "down"}, status=503)
    return JsonResponse({"status": "ok", "database": database, "redis": _redis()})


@require_GET
@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: the database and, where the deployment uses it, Redis both answer."""
    database, redis_state = _database(), _redis()
    ready = database is not None and redis_state != "down"
    return JsonResponse(
        {
            "status": "ok" if ready else "unavailable",
            "database": database or "down",
            "redis": redis_state,
        },
        status=200 if ready else 503,
    )
