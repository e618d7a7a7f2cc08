"""Reads on the event loop give what the thread path gives, value for value, and a loop's
pool leaves no connection behind once the loop has ended."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from storage import aio, engine
from storage.addresses import Value
from storage.writes import set_value

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="reads on the event loop are PostgreSQL's"
    ),
]


def loop_connections(*, expect: int) -> int:
    """The loop pools' connections the database lists, waiting a little for ``expect``: a
    closed connection's backend leaves the list a moment after."""
    deadline = time.monotonic() + 3
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND application_name = %s",
                [aio.APPLICATION_NAME],
            )
            count = int(cursor.fetchone()[0])
        if count == expect or time.monotonic() > deadline:
            return count
        time.sleep(0.05)


def drop_loop_connections() -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = %s AND datname = current_database()",
                [aio.APPLICATION_NAME],
            )
    finally:
        connection.close()  # this thread's, given back before the test database goes


def test_a_value_read_on_the_loop_is_the_value_read_in_a_thread() -> None:
    namespace = f"test/{uuid.uuid4()}"
    first, second = Value(namespace, "a"), Value(namespace, "b")
    engine.commit([set_value(first, {"é": [1, 2.5, None]}, source={"user": "alice"})])
    engine.commit([set_value(second, "x" * 10_000)])
    absent = Value(namespace, "absent")

    async def read() -> tuple[object, object]:
        try:
            return await engine.aget_value(first), await engine.aget_values([second, absent, first])
        finally:
            await aio.close_pools()

    one, many = asyncio.run(read())
    assert one == engine.get_value(first)
    assert many == engine.get_values([second, absent, first])
    assert one is not None and one.written_at.tzinfo == UTC


def test_a_loop_that_ended_leaves_no_connection_open() -> None:
    namespace = f"test/{uuid.uuid4()}"
    engine.commit([set_value(Value(namespace, "a"), 1)])
    before = loop_connections(expect=0)
    loop = asyncio.new_event_loop()
    try:
        # As a test's loop ends: it has run its last step, and nobody closed the pool.
        loop.run_until_complete(engine.aget_value(Value(namespace, "a")))
        assert loop_connections(expect=before + 1) == before + 1
        aio.close_abandoned()
        assert loop_connections(expect=before) == before
    finally:
        loop.close()


def test_a_connection_the_database_dropped_costs_a_read_nothing() -> None:
    # As after a PostgreSQL restart: the pool still holds connections that are gone.
    address = Value(f"test/{uuid.uuid4()}", "a")
    engine.commit([set_value(address, "still here")])

    async def read_after_the_drop() -> object:
        try:
            await engine.aget_value(address)
            await sync_to_async(drop_loop_connections)()
            return await engine.aget_value(address)
        finally:
            await aio.close_pools()

    stored = asyncio.run(read_after_the_drop())
    assert stored is not None and stored.value == "still here"  # type: ignore[attr-defined]


def test_a_burst_of_first_reads_is_served_and_a_pool_that_closed_is_replaced() -> None:
    # As a worker's first moments under a hundred Boards: every read arrives before the
    # pool holds a connection. Once, its open closed the pool for good and the worker
    # answered every read after with 1011.
    address = Value(f"test/{uuid.uuid4()}", "a")
    engine.commit([set_value(address, "here")])

    async def reads() -> list[object]:
        try:
            burst = await asyncio.gather(*(engine.aget_value(address) for _ in range(50)))
            for held in aio._pools[asyncio.get_running_loop()].values():
                await held.pool.close()  # closed under the loop, by whatever means
            return [*burst, await engine.aget_value(address)]
        finally:
            await aio.close_pools()

    stored = asyncio.run(reads())
    assert [getattr(s, "value", None) for s in stored] == ["here"] * 51
