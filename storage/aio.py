"""Reads on the event loop: psycopg's async connections, for PostgreSQL's hot reads.

A bridge ``get`` used to cross into a thread and back for two short statements; most of its
cost was that crossing and the GIL contention of the executor threads (bench B2/B3), not
the database. Here each event loop has its own small pool of async connections (a pool
belongs to the loop that opened it), in autocommit, on UTC, preparing statements as
Django's connections do. Only reads run here: a write keeps Django's connection, so
``transaction.atomic`` and ``on_commit`` keep composing with it.

SQLite has no async driver worth the name, and a test inside a transaction would not see
its own rows from another connection: ``reads_on_loop`` says when to take this path.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connections

#: Django's connection options that are Django's own, not libpq's or psycopg's.
_DJANGO_ONLY_OPTIONS = frozenset({"pool", "server_side_binding", "isolation_level", "assume_role"})

#: How these connections show in ``pg_stat_activity``.
APPLICATION_NAME = "kanban-loop-reads"

_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _LoopPool]] = (
    weakref.WeakKeyDictionary()
)


def reads_on_loop(using: str = "default") -> bool:
    """True when reads of ``using`` may run here: PostgreSQL, the setting on, and the
    connection not inside a transaction of this thread (a test's, or a caller's atomic
    block, whose uncommitted rows another connection would not see)."""
    connection = connections[using]
    return (
        connection.vendor == "postgresql"
        and bool(settings.KANBAN_READS_ON_LOOP)
        and not connection.in_atomic_block
    )


def connection_kwargs(using: str = "default") -> dict[str, Any]:
    """psycopg's connect arguments for the database behind ``using``, as Django would
    connect (its test database during tests)."""
    settings_dict = connections[using].settings_dict
    options = {
        name: value
        for name, value in (settings_dict.get("OPTIONS") or {}).items()
        if name not in _DJANGO_ONLY_OPTIONS
    }
    kwargs: dict[str, Any] = {
        "dbname": settings_dict["NAME"],
        **options,
        "autocommit": True,
        "application_name": APPLICATION_NAME,
    }
    for name, key in (("user", "USER"), ("password", "PASSWORD"), ("host", "HOST")):
        if settings_dict.get(key):
            kwargs[name] = settings_dict[key]
    if settings_dict.get("PORT"):
        kwargs["port"] = int(settings_dict["PORT"])
    return kwargs


def _django_pool(using: str) -> dict[str, Any]:
    pool = (connections[using].settings_dict.get("OPTIONS") or {}).get("pool")
    return pool if isinstance(pool, dict) else {}


async def _configure(connection: Any) -> None:
    # As Django's connections: times come back in UTC.
    await connection.execute("SET TIME ZONE 'UTC'")
    _connections.setdefault(asyncio.get_running_loop(), weakref.WeakSet()).add(connection)


#: Every connection a loop's pools opened, so that those of a loop that ended can be closed.
_connections: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, weakref.WeakSet[Any]] = (
    weakref.WeakKeyDictionary()
)


@dataclass
class _LoopPool:
    pool: Any
    #: The pool's open, shared by every read that comes while it runs.
    opening: asyncio.Task[None]


async def _pool(using: str) -> Any:
    """This loop's pool for ``using``, opened once. A pool that closed (a test's, a
    shutdown's) is replaced: one that stayed closed would refuse every read of this worker
    from then on."""
    from psycopg_pool import AsyncConnectionPool

    loop = asyncio.get_running_loop()
    pools = _pools.setdefault(loop, {})
    held = pools.get(using)
    if held is None or (held.opening.done() and held.pool.closed):
        pool = AsyncConnectionPool(
            kwargs=connection_kwargs(using),
            min_size=1,
            max_size=int(settings.KANBAN_LOOP_POOL_MAX),
            # As long as a thread waits for Django's pool.
            timeout=float(_django_pool(using).get("timeout", 10.0)),
            configure=_configure,
            open=False,
            name=f"loop-reads-{using}",
        )
        # One open, every read waiting on it: a read asked of the pool before its first
        # connection is ready would open a second, and two reads in psycopg's wait at once
        # trip its assert. If the wait times out the pool closes itself, the read fails as
        # an outage, and the next read makes a new pool.
        opening = loop.create_task(pool.open(wait=True, timeout=pool.timeout))
        held = pools[using] = _LoopPool(pool, opening)
    await asyncio.shield(held.opening)
    return held.pool


@asynccontextmanager
async def cursor(using: str = "default") -> AsyncIterator[Any]:
    """An async cursor binding on the server, on a pooled connection of this loop. psycopg's
    errors surface as Django's ``DatabaseError``, as on the thread path."""
    import psycopg

    try:
        pool = await _pool(using)
        async with pool.connection() as connection, connection.cursor() as cur:
            yield cur
    except psycopg.Error as error:
        raise DatabaseError(str(error)) from error


async def _query(sql: str, params: Sequence[Any], using: str, *, many: bool) -> Any:
    import psycopg
    from psycopg_pool import PoolTimeout

    # A connection the database dropped while idle in the pool (a restart) fails once and
    # is discarded; a read is safe to run again, on another. After a restart every pooled
    # connection may be gone: one more try than the pool holds. A pool that has none to
    # give is an outage: that is not asked twice.
    attempts = int(settings.KANBAN_LOOP_POOL_MAX) + 1
    for attempt in range(1, attempts + 1):
        try:
            async with cursor(using) as cur:
                await cur.execute(sql, params, prepare=True)
                return list(await cur.fetchall()) if many else await cur.fetchone()
        except DatabaseError as error:
            cause = error.__cause__
            lost = isinstance(cause, psycopg.OperationalError) and not isinstance(
                cause, PoolTimeout
            )
            if attempt == attempts or not lost:
                raise
    raise AssertionError("unreachable")


async def fetchone(sql: str, params: Sequence[Any], *, using: str = "default") -> Any:
    return await _query(sql, params, using, many=False)


async def fetchall(sql: str, params: Sequence[Any], *, using: str = "default") -> list[Any]:
    return list(await _query(sql, params, using, many=True))


def pool_stats() -> dict[str, int]:
    """psycopg's pool gauges, summed over every loop's pools (for /metrics)."""
    total: dict[str, int] = {}
    for pools in list(_pools.values()):
        for held in pools.values():
            for name, value in held.pool.get_stats().items():
                total[name] = total.get(name, 0) + value
    return total


async def close_pools() -> None:
    """Close this loop's pools (a test's loop ends; a worker shuts down)."""
    await _close(_pools.pop(asyncio.get_running_loop(), {}))


async def _close(pools: dict[str, _LoopPool]) -> None:
    for held in pools.values():
        await asyncio.gather(held.opening, return_exceptions=True)
        await held.pool.close()


def close_abandoned() -> None:
    """Close the pools of every loop that is not running (a test's loop that ended): nothing
    else would, and the database would keep their connections, holding a test database
    open, until this process exits."""
    for loop in [loop for loop in list(_pools) if not loop.is_running()]:
        pools = _pools.pop(loop, {})
        opened = list(_connections.pop(loop, ()))
        if not loop.is_closed():
            # Closed in their loop, so their workers stop instead of reconnecting later.
            loop.run_until_complete(_close(pools))
            continue
        for connection in opened:  # the loop is gone, and its pools' tasks with it
            connection.pgconn.finish()
