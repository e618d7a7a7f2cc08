"""A worker's pool tries PostgreSQL again at a flat rhythm, not an ever longer backoff
(storage/pool_retry.py; the PostgreSQL-restart scenario measures the recovery it buys)."""

from __future__ import annotations

import pytest

from storage.pool_retry import RETRY_SECONDS

pool_base = pytest.importorskip("psycopg_pool.base")


def test_every_attempt_after_a_failure_waits_the_same_short_time() -> None:
    attempt = pool_base.AttemptWithBackoff(timeout=300)
    delays = []
    for _ in range(8):
        attempt.update_delay(now=0.0)
        delays.append(attempt.delay)
    jitter = pool_base.AttemptWithBackoff.DELAY_JITTER
    assert all(RETRY_SECONDS * (1 - jitter) <= d <= RETRY_SECONDS * (1 + jitter) for d in delays)
