"""The REST API's per-person rate: DRF's, counted in the cache, which is Redis (the whole
deployment) when ``REDIS_URL`` is set. While that cache does not answer, requests go
unthrottled rather than refused: a Redis outage must not take REST down with it, when
PostgreSQL alone holds the data (R8 keeps the bridge serving through one too)."""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import RedisError
from rest_framework import throttling

logger = logging.getLogger(__name__)


class UserRateThrottle(throttling.UserRateThrottle):
    def allow_request(self, request: Any, view: Any) -> bool:
        try:
            return super().allow_request(request, view)
        except (RedisError, OSError):
            logger.warning("API rate not counted: the cache did not answer", exc_info=True)
            return True
