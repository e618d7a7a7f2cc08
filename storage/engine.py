"""The storage engine: reads and atomic multi-write commits over the raw driver cursor.

Reads and writes go through Django's connection (so ``transaction.atomic`` and
``on_commit`` compose with callers) but skip the ORM on the hot path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, NoReturn, cast

from django.db import connections, transaction

from storage import aio, events, jsoncodec, limits, usage
from storage.addresses import MAX_KEY_LENGTH, MAX_NAMESPACE_LENGTH, Value, ValueList, check_text
from storage.backends import Dialect, dialect_for
from storage.backends.postgresql import PostgresDialect
from storage.errors import Conflict, invalid_argument
from storage.writes import ANY, AppendList, DeleteList, DeleteValue, SetValue, Write

DEFAULT_LIST_LIMIT = 1000
MAX_LIST_LIMIT = 10_000
DEFAULT_SCAN_LIMIT = 1000
MAX_SCAN_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class StoredValue:
    address: Value
    value: Any
    seq: int
    source: dict[str, Any] | None
    written_at: datetime


@dataclass(frozen=True, slots=True)
class ListElement:
    seq: int
    value: Any


@dataclass(frozen=True, slots=True)
class WriteResult:
    """``seq`` is the write's revision; None when a delete found nothing to remove."""

    seq: int | None

    @property
    def applied(self) -> bool:
        return self.seq is not None


@dataclass(frozen=True, slots=True)
class Read:
    """One read the engine served: ``op`` is get, scan or list (or last_write: a value's
    seq and source without the value); ``address`` what it named."""

    op: Literal["get", "scan", "list", "last_write", "history"]
    address: Value | ValueList


#: Reads of the current thread or task, while ``recording_reads`` is active. The engine runs
#: on the raw driver cursor, which Django's query capture does not see.
_read_log: ContextVar[list[Read] | None] = ContextVar("storage_read_log", default=None)


@contextmanager
def recording_reads() -> Iterator[list[Read]]:
    """Collect every read this thread or task makes (for tests proving what a call touched)."""
    log: list[Read] = []
    token = _read_log.set(log)
    try:
        yield log
    finally:
        _read_log.reset(token)


def record(
    op: Literal["get", "scan", "list", "last_write", "history"], address: Value | ValueList
) -> None:
    log = _read_log.get()
    if log is not None:
        log.append(Read(op, address))


#: Where a Django connection keeps its idle driver cursor: ``(driver connection, cursor)``.
_IDLE_CURSOR = "_storage_idle_cursor"


@contextmanager
def driver_cursor(using: str) -> Iterator[tuple[Dialect, Any]]:
    """The driver's own cursor (``%s`` placeholders on PostgreSQL, ``?`` on SQLite) with
    Django's error translation: for hot paths that Django's cursor wrappers would slow.

    One cursor per connection is reused while it stays healthy (making one was a tenth of a
    point read). A nested use finds none idle and gets its own, so two never share. Seam:
    the idle cursor lives in the Django connection's ``__dict__`` and is valid only while
    ``connection.connection`` is the same driver connection (pinned in
    tests/kanban/bridge/test_seams.py)."""
    connection = connections[using]
    connection.ensure_connection()
    with connection.wrap_database_errors:
        dialect = dialect_for(connection.vendor)
        raw = connection.connection
        idle = connection.__dict__.pop(_IDLE_CURSOR, None)
        cursor = idle[1] if idle is not None and idle[0] is raw else dialect.cursor(raw)
        try:
            yield dialect, cursor
        except BaseException:
            cursor.close()
            raise
        if connection.connection is raw and _IDLE_CURSOR not in connection.__dict__:
            connection.__dict__[_IDLE_CURSOR] = (raw, cursor)
        else:
            cursor.close()


def check_limit(limit: object, default: int, maximum: int) -> int:
    if limit is None:
        return default
    if type(limit) is not int or limit <= 0:
        raise invalid_argument("limit must be a positive integer", field="limit")
    return min(limit, maximum)


def _stored(dialect: Dialect, address: Value, row: tuple[Any, ...]) -> StoredValue:
    seq, text, source, written_at = row
    return StoredValue(
        address=address,
        value=jsoncodec.decode(text),
        seq=int(seq),
        source=None if source is None else json.loads(source),
        written_at=dialect.from_db_time(written_at),
    )


def _loop_dialect() -> PostgresDialect:
    """Reads on the event loop run on PostgreSQL only (``storage.aio``)."""
    return cast(PostgresDialect, dialect_for("postgresql"))


def _check_one(address: Value) -> None:
    if not isinstance(address, Value):
        raise invalid_argument("get_value needs a Value address")
    record("get", address)


def get_value(address: Value, *, using: str = "default") -> StoredValue | None:
    _check_one(address)
    with driver_cursor(using) as (dialect, cursor):
        cursor.execute(dialect.get_value, (address.namespace, address.key))
        row = cursor.fetchone()
    return None if row is None else _stored(dialect, address, row)


async def aget_value(address: Value, *, using: str = "default") -> StoredValue | None:
    """``get_value`` on the event loop (PostgreSQL only: ``storage.aio.reads_on_loop``)."""
    _check_one(address)
    dialect = _loop_dialect()
    row = await aio.fetchone(dialect.get_value, (address.namespace, address.key), using=using)
    return None if row is None else _stored(dialect, address, row)


def _check_batch(addresses: Sequence[Value]) -> tuple[str, list[str]]:
    """The one namespace of a batched read and its distinct keys."""
    if not all(isinstance(a, Value) for a in addresses):
        raise invalid_argument("get_values needs Value addresses")
    namespace = addresses[0].namespace
    if any(a.namespace != namespace for a in addresses):
        raise invalid_argument("get_values reads one namespace at a time")
    for address in addresses:
        record("get", address)
    return namespace, list(dict.fromkeys(a.key for a in addresses))


def _in_order(
    dialect: Dialect, addresses: Sequence[Value], rows: Sequence[tuple[Any, ...]]
) -> list[StoredValue | None]:
    by_key = {row[0]: row[1:] for row in rows}
    return [
        None if (row := by_key.get(a.key)) is None else _stored(dialect, a, row) for a in addresses
    ]


def get_values(addresses: Sequence[Value], *, using: str = "default") -> list[StoredValue | None]:
    """Many values of one namespace in one round trip, in the order asked (None: absent)."""
    if not addresses:
        return []
    namespace, keys = _check_batch(addresses)
    with driver_cursor(using) as (dialect, cursor):
        rows = dialect.select_values(cursor, namespace, keys)
    return _in_order(dialect, addresses, rows)


async def aget_values(
    addresses: Sequence[Value], *, using: str = "default"
) -> list[StoredValue | None]:
    """``get_values`` on the event loop (PostgreSQL only)."""
    if not addresses:
        return []
    namespace, keys = _check_batch(addresses)
    dialect = _loop_dialect()
    rows = await aio.fetchall(dialect.select_values_sql, (namespace, keys), using=using)
    return _in_order(dialect, addresses, rows)


@dataclass(frozen=True, slots=True)
class LastWrite:
    seq: int
    source: dict[str, Any] | None
    written_at: datetime


def get_last_write(address: Value, *, using: str = "default") -> LastWrite | None:
    """A value's revision, write source and time, without reading the value (which may be
    a multi-megabyte document body)."""
    if not isinstance(address, Value):
        raise invalid_argument("get_last_write needs a Value address")
    record("last_write", address)
    with driver_cursor(using) as (dialect, cursor):
        cursor.execute(dialect.get_write, (address.namespace, address.key))
        row = cursor.fetchone()
    return None if row is None else _last_write(dialect, row)


def latest_write(root: str, *, using: str = "default") -> LastWrite | None:
    """The newest value stored under any namespace that starts with ``root`` (which ends
    with "."): when a whole dataset family last changed, and through whom. Values deleted
    since leave no trace here."""
    high = _namespace_root_bound(root)
    with driver_cursor(using) as (dialect, cursor):
        row = dialect.latest_in_range(cursor, root, high)
    return None if row is None else _last_write(dialect, row)


def _last_write(dialect: Dialect, row: tuple[Any, ...]) -> LastWrite:
    seq, source, written_at = row
    return LastWrite(
        seq=int(seq),
        source=None if source is None else json.loads(source),
        written_at=dialect.from_db_time(written_at),
    )


def _namespace_root_bound(root: str) -> str:
    """The upper bound of the namespaces under ``root``: the root with its final "." raised."""
    check_text(root, field="namespace", allow_empty=False, max_length=MAX_NAMESPACE_LENGTH)
    if not root.endswith("."):
        raise invalid_argument("a namespace root ends with '.'", field="namespace")
    return root[:-1] + chr(ord(".") + 1)


def _prefix_upper_bound(prefix: str) -> str | None:
    """The smallest string greater than every string that starts with ``prefix``."""
    stripped = prefix.rstrip("\U0010ffff")
    if not stripped:
        return None
    last = ord(stripped[-1]) + 1
    if 0xD800 <= last <= 0xDFFF:  # surrogates cannot be stored; skip past them
        last = 0xE000
    return stripped[:-1] + chr(last)


def scan_values(
    prefix: Value,
    *,
    start_after: str | None = None,
    limit: int | None = None,
    using: str = "default",
) -> list[StoredValue]:
    """Values in ``prefix.namespace`` whose key starts with ``prefix.key``, key-ascending.

    Bounded: at most ``limit`` rows (default 1,000, clamped at 10,000). Page with
    ``start_after`` set to the last key seen. Never crosses into another namespace.
    """
    if not isinstance(prefix, Value):
        raise invalid_argument("scan_values needs a Value prefix address")
    size = check_limit(limit, DEFAULT_SCAN_LIMIT, MAX_SCAN_LIMIT)
    if start_after is not None:
        # Held to the key rule: a NUL would otherwise reach PostgreSQL and fail there.
        check_text(start_after, field="after", allow_empty=True, max_length=MAX_KEY_LENGTH)
    low = prefix.key
    high = _prefix_upper_bound(prefix.key)
    # Keys ending in U+10FFFF runs are the only case the range bound cannot express.
    exact_filter = high is None and prefix.key != ""
    exclusive = start_after is not None and start_after >= low
    if exclusive:
        low = start_after  # type: ignore[assignment]
    record("scan", prefix)
    with driver_cursor(using) as (dialect, cursor):
        rows = dialect.scan(cursor, prefix.namespace, low, high, size, low_exclusive=exclusive)
    result = []
    for key, *rest in rows:
        if exact_filter and not key.startswith(prefix.key):
            continue
        result.append(_stored(dialect, Value(prefix.namespace, key), tuple(rest)))
    return result


def read_list(
    address: ValueList,
    cursor: int | None = None,
    order: Literal["asc", "desc"] = "asc",
    limit: int | None = DEFAULT_LIST_LIMIT,
    *,
    using: str = "default",
) -> list[ListElement]:
    """One page of a list: seq > cursor ascending, or seq < cursor descending."""
    if not isinstance(address, ValueList):
        raise invalid_argument("read_list needs a ValueList address")
    if order not in ("asc", "desc"):
        raise invalid_argument("order must be 'asc' or 'desc'", field="order")
    if cursor is not None and (type(cursor) is not int or not 0 <= cursor <= limits.MAX_SEQ):
        raise invalid_argument("cursor must be a non-negative integer seq", field="cursor")
    size = check_limit(limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT)
    record("list", address)
    with driver_cursor(using) as (dialect, db):
        if order == "asc":
            bound = 0 if cursor is None else cursor
            db.execute(dialect.read_list_asc, (address.namespace, address.key, bound, size))
        else:
            bound = limits.MAX_SEQ if cursor is None else cursor
            db.execute(dialect.read_list_desc, (address.namespace, address.key, bound, size))
        rows = db.fetchall()
    return [ListElement(int(seq), jsoncodec.decode(text)) for seq, text in rows]


def project_bytes(root: str, *, using: str = "default") -> int:
    """The bytes counted for the project whose namespaces start with ``root``."""
    with driver_cursor(using) as (dialect, cursor):
        cursor.execute(
            f"SELECT bytes FROM storage_usage WHERE root = {dialect.placeholder}", (root,)
        )
        row = cursor.fetchone()
    return 0 if row is None else int(row[0])


def add_file_bytes(root: str, change: int, *, using: str = "default") -> int:
    """Count ``change`` more bytes of a project's files (negative: fewer) in its usage row,
    as ``commit``'s ``file_bytes`` does but with no write and no limit: for a load, whose
    ``recount`` counts only what the engine stores. The bytes the row now holds."""
    charges = _check_file_bytes({root: change})
    with transaction.atomic(using=using), driver_cursor(using) as (dialect, cursor):
        dialect.lock_usage(cursor, root)
        return dialect.add_usage(cursor, root, charges.get(root, 0))


def lock_namespace(namespace: str, *, using: str = "default") -> None:
    """Serialize writers of ``namespace`` until the current transaction ends.

    For read-modify-write sequences spanning several values (an index and its pages), where
    per-value compare-and-set alone would make concurrent writers retry in a loop. Must run
    inside ``transaction.atomic``: outside one the lock would be released at once.
    """
    check_text(namespace, field="namespace", allow_empty=False, max_length=MAX_NAMESPACE_LENGTH)
    if not connections[using].in_atomic_block:
        raise RuntimeError("lock_namespace must be called inside transaction.atomic")
    with driver_cursor(using) as (dialect, cursor):
        dialect.lock_namespace(cursor, namespace)


def namespaces_under(root: str, *, using: str = "default") -> set[str]:
    """Every namespace starting with ``root`` (which ends with ".") that holds anything."""
    high = _namespace_root_bound(root)
    with driver_cursor(using) as (dialect, cursor):
        return dialect.namespaces_in_range(cursor, root, high)


def erase_namespaces(root: str, *, using: str = "default") -> int:
    """Delete everything stored under every namespace that starts with ``root`` (which ends
    with "."), in one transaction: the lifecycle end of a whole dataset family, such as a
    deleted project's. Publishes no change events; whoever ends the family tells its
    subscribers. Returns how many rows went."""
    high = _namespace_root_bound(root)
    with transaction.atomic(using=using), driver_cursor(using) as (dialect, cursor):
        dialect.lock_usage(cursor, root)  # a project's root: as its writers do, first
        removed = dialect.erase_range(cursor, root, high)
        dialect.erase_usage(cursor, root, high)
        return removed


def commit(
    writes: Sequence[Write],
    *,
    using: str = "default",
    max_project_bytes: int | None = None,
    file_bytes: Mapping[str, int] | None = None,
) -> list[WriteResult]:
    """Apply every write atomically, in order; each applied write gets its own seq.

    A compare-and-set mismatch raises ``Conflict`` and nothing is committed. Change events
    are published after the outermost transaction commits, and never on rollback.

    Writes to a project's datasets change its usage row (``storage.usage``) in the same
    transaction; one that would take a project past ``max_project_bytes`` raises
    ``quota_exceeded`` and nothing is committed.

    ``file_bytes`` maps a project root to the bytes it keeps outside the engine (its files)
    that this commit adds (negative: frees): they count in the same usage row, under the
    same lock and the same limit, so a file and its metadata are counted or refused as one.
    """
    if not writes:
        return []
    charges = _check_file_bytes(file_bytes)
    for write in writes:
        if not isinstance(write, SetValue | DeleteValue | AppendList | DeleteList):
            raise invalid_argument("commit takes writes built by storage.writes")
    if max_project_bytes is not None and (
        type(max_project_bytes) is not int or max_project_bytes < 0
    ):
        raise invalid_argument("max_project_bytes must be a non-negative integer")
    now = datetime.now(UTC)
    roots = sorted(set(usage.roots_of(writes)) | set(charges))
    connection = connections[using]
    if connection.in_atomic_block or not connection.get_autocommit():
        with transaction.atomic(using=using), driver_cursor(using) as (dialect, cursor):
            results, changes = _apply_all(
                dialect, cursor, writes, now, roots, max_project_bytes, charges
            )
            if changes:
                events.CHANGES.send_on_commit(changes, using=using)
        return results
    # No caller's transaction to join: the driver's own BEGIN ... COMMIT, without Django's
    # savepoint and autocommit bookkeeping (a fifth of a single compare-and-set write). A
    # lone write that the database does in one statement needs no BEGIN/COMMIT at all: the
    # statement is its own transaction, and two round trips fewer. A project's write is
    # never one statement: its usage row is locked first and changed after.
    dialect = dialect_for(connection.vendor)
    one_statement = (
        not roots
        and len(writes) == 1
        and isinstance(writes[0], SetValue | AppendList)
        and dialect.one_statement_writes
    )
    with (
        driver_cursor(using) as (dialect, cursor),
        nullcontext() if one_statement else dialect.transaction(connection.connection),
    ):
        results, changes = _apply_all(
            dialect, cursor, writes, now, roots, max_project_bytes, charges
        )
    if changes:
        events.CHANGES.send_on_commit(changes, using=using)  # committed: heard at once
    return results


def _apply_all(
    dialect: Dialect,
    cursor: Any,
    writes: Sequence[Write],
    now: datetime,
    roots: list[str],
    limit: int | None,
    charges: Mapping[str, int],
) -> tuple[list[WriteResult], list[events.Change]]:
    when = dialect.to_db_time(now)
    results: list[WriteResult] = []
    changes: list[events.Change] = []
    ledger = usage.Ledger(dialect, cursor, roots) if roots else None
    for write in writes:
        root, freed = (None, 0) if ledger is None else ledger.freed_by(write)
        seq, change = _apply(dialect, cursor, write, when, ledger)
        results.append(WriteResult(seq))
        if change is not None:
            changes.append(change)
            if ledger is not None and root is not None:
                ledger.applied(write, root, freed)
    if ledger is not None:
        for root, size in charges.items():
            ledger.charge(root, size)
        ledger.settle(limit)
    return results, changes


def _check_file_bytes(file_bytes: Mapping[str, int] | None) -> dict[str, int]:
    charges: dict[str, int] = {}
    for root, change in (file_bytes or {}).items():
        if (
            not isinstance(root, str)
            or usage.root_of(root + "kv") != root
            or type(change) is not int
        ):
            raise invalid_argument("file_bytes maps project roots to whole numbers of bytes")
        if change:
            charges[root] = change
    return charges


def _apply(
    dialect: Dialect, cursor: Any, write: Write, when: Any, ledger: usage.Ledger | None
) -> tuple[int | None, events.Change | None]:
    namespace, key = write.address.namespace, write.address.key
    if isinstance(write, SetValue):
        params = (namespace, key, write.text, write.source, when)
        root = None if ledger is None else usage.root_of(namespace)
        if ledger is not None and root is not None:
            seq: int | None = ledger.set(write, params, root)
        elif write.expected_seq is ANY:
            seq = dialect.upsert(cursor, params, write.keep)
        elif write.expected_seq is None:
            seq = dialect.insert_absent(cursor, params, write.keep)
        else:
            assert isinstance(write.expected_seq, int)
            seq = dialect.update_at(cursor, params, write.expected_seq, write.keep)
        if seq is None:
            _raise_conflict(dialect, cursor, write.address, write.expected_seq)
        return seq, events.Change(
            "value", namespace, key, seq, deleted=False, text=write.text, source=write.source
        )
    if isinstance(write, DeleteValue):
        if write.expected_seq is ANY:
            cursor.execute(dialect.delete_value, (namespace, key))
        else:
            cursor.execute(dialect.delete_value_at, (namespace, key, write.expected_seq))
        if cursor.fetchone() is None:
            if write.expected_seq is not ANY:
                _raise_conflict(dialect, cursor, write.address, write.expected_seq)
            return None, None
        seq = dialect.allocate_seq(cursor)
        if write.keep:
            dialect.keep_version(
                cursor, (namespace, key, seq, None, write.source, when), write.keep
            )
        return seq, events.Change("value", namespace, key, seq, deleted=True, source=write.source)
    if isinstance(write, AppendList):
        seq = dialect.append(cursor, namespace, key, write.text)
        return seq, events.Change("list", namespace, key, seq, deleted=False)
    cursor.execute(dialect.delete_list, (namespace, key))
    if cursor.rowcount <= 0:
        return None, None
    seq = dialect.allocate_seq(cursor)
    return seq, events.Change("list", namespace, key, seq, deleted=True)


def _raise_conflict(dialect: Dialect, cursor: Any, address: Value, expected: object) -> NoReturn:
    cursor.execute(dialect.current_seq_of, (address.namespace, address.key))
    row = cursor.fetchone()
    current = None if row is None else int(row[0])
    wanted = "absent" if expected is None else f"revision {expected}"
    raise Conflict(
        f"{address.namespace}/{address.key!r} is not {wanted}; nothing was written",
        current_seq=current,
    )


def is_empty(*, using: str = "default") -> bool:
    with driver_cursor(using) as (dialect, cursor):
        cursor.execute(dialect.is_empty)
        return cursor.fetchone() is None
