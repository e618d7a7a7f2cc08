"""The REST rate is counted in the cache (Redis, with REDIS_URL); a cache that does not
answer lets requests through uncounted instead of refusing them (kanban/quotas/rest.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kanban.models import Project
from tests.api.conftest import People, client_for

pytestmark = pytest.mark.django_db


def test_with_the_cache_gone_the_api_still_answers(
    people: People, board: Project, settings: Any
) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
        }
    }
    bob = client_for(people.bob)
    answers = [bob.get(f"/api/v1/projects/{board.id}/kv/k").status_code for _ in range(3)]
    assert answers == [404, 404, 404], "answered (no such key), not refused with 503"
