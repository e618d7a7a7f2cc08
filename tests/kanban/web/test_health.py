"""The probes: /healthz (liveness) answers while the database does and says how Redis is;
/readyz (readiness) is 503 while a Redis the deployment uses does not answer."""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from tests.kanban.bridge.test_scale_out import redis_reachable

pytestmark = pytest.mark.django_db


def nothing_listening() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"redis://127.0.0.1:{probe.getsockname()[1]}/0"


def test_on_the_embedded_default_both_are_ok_without_redis(settings: Any) -> None:
    settings.REDIS_URL = ""
    for path in ("/healthz", "/readyz"):
        answer = Client().get(path)
        assert answer.status_code == 200
        assert answer.json() == {"status": "ok", "database": connection.vendor, "redis": "unused"}


@pytest.mark.redis
@pytest.mark.skipif(not redis_reachable(), reason="needs the deployment's Redis (REDIS_URL)")
def test_with_redis_answering_both_say_so(settings: Any) -> None:
    settings.REDIS_URL = os.environ["REDIS_URL"]
    for path in ("/healthz", "/readyz"):
        answer = Client().get(path)
        assert (answer.status_code, answer.json()["redis"]) == (200, "ok")


def test_with_redis_down_the_worker_lives_but_is_not_ready(settings: Any) -> None:
    settings.REDIS_URL = nothing_listening()
    live = Client().get("/healthz")
    assert live.status_code == 200 and live.json()["redis"] == "down"
    ready = Client().get("/readyz")
    assert ready.status_code == 503
    assert ready.json() == {"status": "unavailable", "database": connection.vendor, "redis": "down"}
