"""Seam: how soon a worker's PostgreSQL pool tries again after losing the database.

psycopg_pool retries a failed connection with exponential backoff (1 s, 2, 4, 8 ... until
its five-minute ``reconnect_timeout``), so a worker that lost PostgreSQL for 30 s could wait
up to 30 s more once it was back, every request failing meanwhile; after a 10 s outage the
PostgreSQL-restart scenario (tests/reliability) measured 4.8 s on every worker. The pool
keeps the attempt's rhythm in the class attributes of
``psycopg_pool.base.AttemptWithBackoff``; this makes it a flat ``RETRY_SECONDS``: two
connection attempts a second per missing connection during an outage cost the database
nothing, and the first after it returns succeeds. Pinned in tests/storage/test_pool_retry.py.
"""

from __future__ import annotations

from typing import Final

#: Between two attempts to reconnect, for as long as the pool keeps trying.
RETRY_SECONDS: Final = 0.5


def install() -> None:
    try:
        from psycopg_pool.base import AttemptWithBackoff
    except ImportError:  # SQLite only: no pool to tune
        return
    AttemptWithBackoff.INITIAL_DELAY = RETRY_SECONDS
    AttemptWithBackoff.DELAY_BACKOFF = 1.0
