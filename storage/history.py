"""The kept versions of a value: read newest first, pruned once they age out, purged by
an owner. Beside the engine's current values (``storage.engine``), on the same cursor and
usage counts: a purge or prune gives its bytes back to the project at once."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import transaction

from storage import jsoncodec, limits, usage
from storage.addresses import Value
from storage.engine import check_limit, driver_cursor, record
from storage.errors import invalid_argument


@dataclass(frozen=True, slots=True)
class Version:
    """One kept version of a value: ``value`` is None (and ``deleted`` true) for a deletion."""

    seq: int
    value: Any
    deleted: bool
    source: dict[str, Any] | None
    written_at: datetime


DEFAULT_HISTORY_LIMIT = 20
MAX_HISTORY_LIMIT = 100


def read_history(
    address: Value,
    *,
    before: int | None = None,
    since: datetime | None = None,
    limit: int | None = None,
    using: str = "default",
) -> list[Version]:
    """The kept versions of one value, newest first: those before seq ``before`` (a
    cursor: the oldest seq of the page before) and written at ``since`` or later."""
    if not isinstance(address, Value):
        raise invalid_argument("read_history needs a Value address")
    if before is not None and (type(before) is not int or not 0 < before <= limits.MAX_SEQ):
        raise invalid_argument("before must be a positive integer seq", field="before")
    size = check_limit(limit, DEFAULT_HISTORY_LIMIT, MAX_HISTORY_LIMIT)
    record("history", address)
    with driver_cursor(using) as (dialect, cursor):
        rows = dialect.read_history(
            cursor,
            address.namespace,
            address.key,
            limits.MAX_SEQ if before is None else before,
            dialect.to_db_time(since or datetime.min.replace(tzinfo=UTC)),
            size,
        )
    return [
        Version(
            seq=int(seq),
            value=None if text is None else jsoncodec.decode(text),
            deleted=text is None,
            source=None if source is None else json.loads(source),
            written_at=dialect.from_db_time(written_at),
        )
        for seq, text, source, written_at in rows
    ]


def prune_history(*, before: datetime, using: str = "default") -> int:
    """Drop every kept version written before ``before``; how many went. One transaction
    per namespace, its project's usage row locked first (as a write's is)."""
    with driver_cursor(using) as (dialect, cursor):
        when = dialect.to_db_time(before)
        namespaces = dialect.history_namespaces_before(cursor, when)
    removed = 0
    for namespace in namespaces:
        root = usage.root_of(namespace)
        with transaction.atomic(using=using), driver_cursor(using) as (dialect, cursor):
            if root is not None:
                dialect.lock_usage(cursor, root)
            count, freed = dialect.prune_namespace(cursor, namespace, when)
            if root is not None and freed:
                dialect.add_usage(cursor, root, -freed)
        removed += count
    return removed


def purge_history(address: Value, *, using: str = "default") -> int:
    """Drop every kept version of one value (its current value stays): how many went."""
    if not isinstance(address, Value):
        raise invalid_argument("purge_history needs a Value address")
    root = usage.root_of(address.namespace)
    with transaction.atomic(using=using), driver_cursor(using) as (dialect, cursor):
        if root is not None:
            dialect.lock_usage(cursor, root)
        count, freed = dialect.purge_history(cursor, address.namespace, address.key)
        if root is not None and freed:
            dialect.add_usage(cursor, root, -freed)
    return count
