"""Reads on the event loop give what the thread path gives, value for value, and a loop's
pool leaves no connection behind once the loop has ended."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC

import pytest
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


def loop_connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = %s",
            [aio.APPLICATION_NAME],
        )
        return int(cursor.fetchone()[0])


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
    before = loop_connections()
    loop = asyncio.new_event_loop()
    try:
        # As a test's loop ends: it has run its last step, and nobody closed the pool.
        loop.run_until_complete(engine.aget_value(Value(namespace, "a")))
        assert loop_connections() == before + 1
        aio.close_abandoned()
        assert loop_connections() == before
    finally:
        loop.close()
