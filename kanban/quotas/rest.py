"""The REST API's per-person rate, counted in the cache, which is Redis (the whole
deployment) when ``REDIS_URL`` is set.

DRF's own throttle keeps a list of every request's time in the window and rewrites it on
each request: with thousands of requests a minute that list is read, unpickled, grown and
written back every time (the REST hammer took 184 s with it in Redis, 42 s before), and two
workers rewriting it at once lose each other's entries. Here each person has one counter
per window, created with the window's length as its expiry and incremented atomically
(Redis ``INCR``): a window starts with a person's first request and its count is exact.

While the cache does not answer, requests go unthrottled rather than refused: a Redis
outage must not take REST down with it, when PostgreSQL alone holds the data.
"""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import RedisError
from rest_framework import throttling

logger = logging.getLogger(__name__)


class UserRateThrottle(throttling.UserRateThrottle):
    window: int = 60

    def allow_request(self, request: Any, view: Any) -> bool:
        limit, window = self.parse_rate(self.rate)
        key = self.get_cache_key(request, view)
        if limit is None or window is None or key is None:
            return True
        self.window = window
        try:
            self.cache.add(key, 0, timeout=window)
            count = self.cache.incr(key)
        except ValueError:  # the window ended between the two calls
            return True
        except (RedisError, OSError):
            logger.warning("API rate not counted: the cache did not answer", exc_info=True)
            return True
        return bool(count <= limit)

    def wait(self) -> float:
        """An upper bound: the window's whole length (when it began is not kept)."""
        return float(self.window)
