"""The contract every backend dialect meets.

Statements are DB-API strings run on the raw driver cursor of Django's connection (the ORM
costs about 4x a raw point read on this hardware). The engine owns transactions; a dialect
only knows how to spell each step and how this database allocates the global sequence.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

#: A value's columns and a kept version's: the same, in the same order.
_VERSION_COLUMNS = ("namespace", "key", "seq", "value", "source", "written_at")


class Dialect(ABC):
    vendor: str
    #: DDL run by the storage migrations, in order: the tables, then the history (0002,
    #: idempotent, so a fresh store runs it with the rest).
    create_statements: tuple[str, ...]
    history_statements: tuple[str, ...]
    drop_statements: tuple[str, ...]
    #: The tables every dialect drops, before what allocates its sequence (its own).
    table_drops: tuple[str, ...] = (
        "DROP TABLE IF EXISTS value_history",
        "DROP TABLE IF EXISTS list_values",
        "DROP TABLE IF EXISTS scalar_values",
    )

    get_value: str  # (namespace, key) -> seq, value, source, written_at
    get_write: str  # (namespace, key) -> seq, source, written_at (no value)
    read_list_asc: str  # (namespace, key, after_seq, limit) -> seq, value
    read_list_desc: str  # (namespace, key, before_seq, limit) -> seq, value
    delete_value: str  # (namespace, key) -> seq
    delete_value_at: str  # (namespace, key, seq) -> seq
    delete_list: str  # (namespace, key)
    current_seq_of: str  # (namespace, key) -> seq
    is_empty: str  # -> one row when any data exists

    #: What starts a write transaction on this database.
    #: The driver's parameter mark: ``%s`` (psycopg) or ``?`` (sqlite3).
    placeholder: str
    begin: str = "BEGIN"
    #: True when a set or an append is one statement here (sequence included), so that a
    #: commit of just that write is atomic without a transaction around it.
    one_statement_writes: bool = False

    def cursor(self, driver_connection: Any) -> Any:
        """A cursor on the driver's own connection (below Django's wrappers)."""
        return driver_connection.cursor()

    @contextmanager
    def transaction(self, driver_connection: Any) -> Iterator[None]:
        """A transaction of the driver's own, on a connection Django holds in autocommit
        mode outside any ``atomic`` block."""
        driver_connection.execute(self.begin)
        try:
            yield
        except BaseException:
            driver_connection.execute("ROLLBACK")
            raise
        driver_connection.execute("COMMIT")

    @abstractmethod
    def select_values(self, cursor: Any, namespace: str, keys: list[str]) -> list[tuple[Any, ...]]:
        """Rows (key, seq, value, source, written_at) of those keys that hold a value, in one
        statement."""

    @abstractmethod
    def allocate_seq(self, cursor: Any) -> int:
        """Take the next value of the global sequence inside the current transaction."""

    @abstractmethod
    def lock_namespace(self, cursor: Any, namespace: str) -> None:
        """Block until no other transaction holds ``namespace``'s lock; hold it until this
        transaction ends."""

    @abstractmethod
    def upsert(self, cursor: Any, params: tuple[Any, ...], keep: int) -> int:
        """Set (namespace, key, value, source, written_at); return the new seq. With
        ``keep``, the new version goes into the history too, which then holds at most
        ``keep`` versions of the key."""

    @abstractmethod
    def insert_absent(self, cursor: Any, params: tuple[Any, ...], keep: int) -> int | None:
        """Insert only when absent; None when a value is already there."""

    @abstractmethod
    def update_at(
        self, cursor: Any, params: tuple[Any, ...], expected_seq: int, keep: int
    ) -> int | None:
        """Replace only when the current seq is ``expected_seq``; None otherwise."""

    def keep_version(self, cursor: Any, row: tuple[Any, ...], keep: int) -> None:
        """Add one version (namespace, key, seq, value or None for a deletion, source,
        written_at) to the history, and drop the key's versions past the newest ``keep``:
        by the primary key, never a scan."""
        p = self.placeholder
        namespace, key = row[0], row[1]
        cursor.execute(
            "INSERT INTO value_history (namespace, key, seq, value, source, written_at) "
            f"VALUES ({p}, {p}, {p}, {p}, {p}, {p})",
            row,
        )
        cursor.execute(
            f"DELETE FROM value_history WHERE namespace = {p} AND key = {p} AND seq <= "
            f"(SELECT seq FROM value_history WHERE namespace = {p} AND key = {p} "
            f"ORDER BY seq DESC LIMIT 1 OFFSET {p})",
            (namespace, key, namespace, key, keep),
        )

    def read_history(
        self, cursor: Any, namespace: str, key: str, before: int, since: Any, limit: int
    ) -> list[tuple[Any, ...]]:
        """Versions (seq, value or None, source, written_at) of one key with seq < before,
        written at or after ``since``, newest first."""
        p = self.placeholder
        cursor.execute(
            "SELECT seq, value, source, written_at FROM value_history "
            f"WHERE namespace = {p} AND key = {p} AND seq < {p} AND written_at >= {p} "
            f"ORDER BY seq DESC LIMIT {p}",
            (namespace, key, before, since, limit),
        )
        return list(cursor.fetchall())

    def prune_history(self, cursor: Any, before: Any) -> int:
        """Drop every version written before ``before`` (by the written_at index)."""
        cursor.execute(
            f"DELETE FROM value_history WHERE written_at < {self.placeholder}", (before,)
        )
        return max(cursor.rowcount, 0)

    @abstractmethod
    def append(self, cursor: Any, namespace: str, key: str, value: str) -> int:
        """Append one list element; return its seq."""

    def scan(
        self,
        cursor: Any,
        namespace: str,
        low: str,
        high: str | None,
        limit: int,
        *,
        low_exclusive: bool = False,
    ) -> list[tuple[Any, ...]]:
        """Rows (key, seq, value, source, written_at) with low <= key < high, key order.

        ``low_exclusive`` makes the lower bound strict (paging after a key)."""
        p = self.placeholder
        sql = (
            "SELECT key, seq, value, source, written_at FROM scalar_values "
            f"WHERE namespace = {p} AND key {'>' if low_exclusive else '>='} {p}"
        )
        params: tuple[Any, ...] = (namespace, low)
        if high is not None:
            sql += f" AND key < {p}"
            params += (high,)
        cursor.execute(sql + f" ORDER BY key LIMIT {p}", (*params, limit))
        return list(cursor.fetchall())

    def erase_range(self, cursor: Any, low: str, high: str) -> int:
        """Delete every value and list element whose namespace is in [low, high); how many
        rows went. A range, not LIKE: it uses the primary key and no character is special."""
        p = self.placeholder
        removed = 0
        for table in ("scalar_values", "list_values", "value_history"):
            cursor.execute(
                f"DELETE FROM {table} WHERE namespace >= {p} AND namespace < {p}", (low, high)
            )
            removed += max(cursor.rowcount, 0)
        return removed

    def latest_in_range(self, cursor: Any, low: str, high: str) -> tuple[Any, ...] | None:
        """(seq, source, written_at) of the newest value whose namespace is in [low, high)."""
        p = self.placeholder
        cursor.execute(
            "SELECT seq, source, written_at FROM scalar_values "
            f"WHERE namespace >= {p} AND namespace < {p} ORDER BY seq DESC LIMIT 1",
            (low, high),
        )
        row = cursor.fetchone()
        return None if row is None else tuple(row)

    def restore_value(self, cursor: Any, row: tuple[Any, ...]) -> None:
        """Insert a dumped value with its original seq (namespace, key, seq, value, ...)."""
        self._restore(cursor, "scalar_values", _VERSION_COLUMNS, row)

    def restore_version(self, cursor: Any, row: tuple[Any, ...]) -> None:
        """Insert a dumped history version (namespace, key, seq, value or None, ...)."""
        self._restore(cursor, "value_history", _VERSION_COLUMNS, row)

    def restore_element(self, cursor: Any, row: tuple[Any, ...]) -> None:
        """Insert a dumped list element with its original seq (namespace, key, seq, value)."""
        self._restore(cursor, "list_values", ("namespace", "key", "seq", "value"), row)

    def _restore(
        self, cursor: Any, table: str, columns: tuple[str, ...], row: tuple[Any, ...]
    ) -> None:
        """A dumped row inserted as it was, seq included (the dump's order of columns)."""
        marks = ", ".join([self.placeholder] * len(columns))
        cursor.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", row)

    @abstractmethod
    def last_seq(self, cursor: Any) -> int:
        """The highest seq ever allocated (0 when none)."""

    @abstractmethod
    def advance_seq(self, cursor: Any, at_least: int) -> None:
        """Make sure the next allocated seq is greater than ``at_least``."""

    def clear(self, cursor: Any) -> None:
        """Delete every value, list element and kept version (the sequence is never
        rewound)."""
        for table in ("scalar_values", "list_values", "value_history"):
            cursor.execute(f"DELETE FROM {table}")

    @abstractmethod
    def to_db_time(self, when: datetime) -> Any: ...

    @abstractmethod
    def from_db_time(self, raw: Any) -> datetime: ...
