"""What one person may take of a worker's bridge, across all their sockets: at most
``KANBAN_SOCKETS_PER_USER`` open sockets, and one message bucket they all draw from (on
top of each socket's own). A thousand sockets, or fifty sockets each at its own rate, no
longer multiply what one account can make a worker do.

Per worker process, like the per-socket bucket; with Redis, ``kanban.quotas.deployment``
counts the same limits for the whole deployment, which workers alone would multiply."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from django.conf import settings

from kanban.quotas.deployment import user_rate


class TokenBucket:
    """A message rate limit: ``rate`` per second, up to ``burst`` at once."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self.tokens, self.stamp = burst, time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


def user_bucket() -> TokenBucket:
    """A person's share: by default four sockets' worth of the per-socket rate."""
    return TokenBucket(*user_rate())


@dataclass
class UserQuota:
    sockets: dict[int, int] = field(default_factory=dict)
    buckets: dict[int, TokenBucket] = field(default_factory=dict)

    def open(self, user_id: int) -> bool:
        """Count a new socket of this user; False (nothing counted) past the cap."""
        held = self.sockets.get(user_id, 0)
        if held >= settings.KANBAN_SOCKETS_PER_USER:
            return False
        self.sockets[user_id] = held + 1
        self.buckets.setdefault(user_id, user_bucket())
        return True

    def close(self, user_id: int) -> None:
        held = self.sockets.get(user_id, 0) - 1
        if held > 0:
            self.sockets[user_id] = held
        else:
            self.sockets.pop(user_id, None)
            self.buckets.pop(user_id, None)

    def take(self, user_id: int) -> bool:
        bucket = self.buckets.get(user_id)
        return bucket is None or bucket.take()


#: This worker's; the consumer runs on one event loop, so no lock is needed.
QUOTA = UserQuota()
