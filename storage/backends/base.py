"""The contract every backend dialect meets.

Statements are DB-API strings run on the raw driver cursor of Django's connection (the ORM
costs about 4x a raw point read on this hardware). The engine owns transactions; a dialect
only knows how to spell each step and how this database allocates the global sequence.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

#: A value's columns and a kept version's: the same, in the same order.
_VERSION_COLUMNS = ("namespace", "key", "seq", "value", "source", "written_at")


@dataclass(frozen=True, slots=True)
class CountedSet:
    """A set of a project's value that changes the project's usage row with it."""

    #: As a plain set's: namespace, key, value, source, written_at.
    params: tuple[Any, ...]
    #: ``ANY`` (an upsert), None (insert only when absent) or the seq it must replace.
    expected_seq: object
    keep: int
    #: The usage row's root and the bytes the write stores there.
    root: str
    added: int


class SetCounted(NamedTuple):
    #: The write's seq; None when it was not applied.
    seq: int | None
    #: How much the usage row changed, and what it holds now (None: unchanged).
    change: int
    used: int | None


class Dialect(ABC):
    vendor: str
    #: DDL run by the storage migrations, in order: the tables, then the history (0002,
    #: idempotent, so a fresh store runs it with the rest).
    create_statements: tuple[str, ...]
    history_statements: tuple[str, ...]
    drop_statements: tuple[str, ...]
    #: DDL of the per-project usage rows (0003, idempotent like the history's).
    usage_statements: tuple[str, ...]
    #: The tables every dialect drops, before what allocates its sequence (its own).
    table_drops: tuple[str, ...] = (
        "DROP TABLE IF EXISTS storage_usage",
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

    #: The UTF-8 byte length of a stored ``value`` column, in this database's SQL.
    value_bytes: str
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

    def namespaces_in_range(self, cursor: Any, low: str, high: str) -> set[str]:
        """Every namespace in [low, high) that holds a value, a list element or a version."""
        p = self.placeholder
        cursor.execute(
            " UNION ".join(
                f"SELECT DISTINCT namespace FROM {table} WHERE namespace >= {p} AND namespace < {p}"
                for table in ("scalar_values", "list_values", "value_history")
            ),
            (low, high) * 3,
        )
        return {row[0] for row in cursor.fetchall()}

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
        """Delete every value, list element, kept version and usage row (the sequence is
        never rewound)."""
        for table in ("scalar_values", "list_values", "value_history", "storage_usage"):
            cursor.execute(f"DELETE FROM {table}")

    # --- usage (storage.usage) -------------------------------------------------------------

    def lock_usage(self, cursor: Any, root: str) -> None:
        """Keep every other writer of ``root``'s project out until this transaction ends:
        the project's namespace lock, under the root's own name (no namespace ends with
        "."), so that what a write replaces is measured on the state it changes."""
        self.lock_namespace(cursor, root)

    def add_usage(self, cursor: Any, root: str, change: int) -> int:
        """Change a root's counted bytes (a row made at need): the bytes it now holds."""
        p = self.placeholder
        cursor.execute(
            f"INSERT INTO storage_usage (root, bytes) VALUES ({p}, {p}) ON CONFLICT (root) "
            "DO UPDATE SET bytes = storage_usage.bytes + excluded.bytes RETURNING bytes",
            (root, change),
        )
        return int(cursor.fetchone()[0])

    def set_counted(self, cursor: Any, write: CountedSet) -> SetCounted:
        """Apply ``write`` as ``upsert``, ``insert_absent`` or ``update_at`` (by its
        ``expected_seq``) and change its root's usage row by what it stores less what it
        replaces. The root must be locked (``lock_usage``) before."""
        params, expected_seq, keep = write.params, write.expected_seq, write.keep
        current, dropped = self.replaced_bytes(cursor, params[0], params[1], keep)
        if expected_seq is None:
            seq = self.insert_absent(cursor, params, keep)
        elif isinstance(expected_seq, int):
            seq = self.update_at(cursor, params, expected_seq, keep)
        else:
            seq = self.upsert(cursor, params, keep)
        if seq is None:
            return SetCounted(None, 0, None)
        change = write.added - (current or 0) - dropped
        return SetCounted(
            seq, change, self.add_usage(cursor, write.root, change) if change else None
        )

    def replaced_bytes(
        self, cursor: Any, namespace: str, key: str, keep: int
    ) -> tuple[int | None, int]:
        """What a write to one value takes away: the bytes of its current value (None when
        absent) and of the kept versions that keeping one more past ``keep`` drops (the
        same rows ``keep_version`` deletes: by the primary key, at most ``keep`` read)."""
        p, size = self.placeholder, self.value_bytes
        if not keep:
            cursor.execute(
                f"SELECT {size} FROM scalar_values WHERE namespace = {p} AND key = {p}",
                (namespace, key),
            )
            row = cursor.fetchone()
            return (None if row is None else int(row[0])), 0
        cursor.execute(
            f"SELECT (SELECT {size} FROM scalar_values WHERE namespace = {p} AND key = {p}), "
            f"(SELECT coalesce(sum({size}), 0) FROM value_history "
            f"WHERE namespace = {p} AND key = {p} AND seq <= "
            f"(SELECT seq FROM value_history WHERE namespace = {p} AND key = {p} "
            f"ORDER BY seq DESC LIMIT 1 OFFSET {p}))",
            (namespace, key, namespace, key, namespace, key, keep - 1),
        )
        current, dropped = cursor.fetchone()
        return (None if current is None else int(current)), int(dropped or 0)

    def list_bytes(self, cursor: Any, namespace: str, key: str) -> int:
        p = self.placeholder
        cursor.execute(
            f"SELECT coalesce(sum({self.value_bytes}), 0) FROM list_values "
            f"WHERE namespace = {p} AND key = {p}",
            (namespace, key),
        )
        return int(cursor.fetchone()[0])

    def purge_history(self, cursor: Any, namespace: str, key: str) -> tuple[int, int]:
        """Drop every kept version of one value: how many went and their bytes."""
        return self._delete_versions(cursor, f"key = {self.placeholder}", (namespace, key))

    def history_namespaces_before(self, cursor: Any, before: Any) -> list[str]:
        """The namespaces holding versions written before ``before`` (by the index)."""
        cursor.execute(
            f"SELECT DISTINCT namespace FROM value_history WHERE written_at < {self.placeholder}",
            (before,),
        )
        return [namespace for (namespace,) in cursor.fetchall()]

    def prune_namespace(self, cursor: Any, namespace: str, before: Any) -> tuple[int, int]:
        """Drop one namespace's versions written before ``before``: how many, their bytes."""
        return self._delete_versions(
            cursor, f"written_at < {self.placeholder}", (namespace, before)
        )

    def _delete_versions(
        self, cursor: Any, condition: str, params: tuple[str, Any]
    ) -> tuple[int, int]:
        """Delete the versions of one namespace (the first parameter) that meet
        ``condition`` too: how many went and their bytes, read back from the deleted rows."""
        cursor.execute(
            f"DELETE FROM value_history WHERE namespace = {self.placeholder} AND {condition} "
            f"RETURNING coalesce({self.value_bytes}, 0)",
            params,
        )
        sizes = [int(size) for (size,) in cursor.fetchall()]
        return len(sizes), sum(sizes)

    def namespace_bytes(self, cursor: Any) -> list[tuple[str, int]]:
        """Every namespace's stored bytes (values, kept versions, list elements): a full
        count, for a migration or a load, never for a write."""
        size = self.value_bytes
        cursor.execute(
            f"SELECT namespace, coalesce(sum({size}), 0) FROM scalar_values GROUP BY namespace "
            f"UNION ALL SELECT namespace, coalesce(sum({size}), 0) FROM value_history "
            "GROUP BY namespace "
            f"UNION ALL SELECT namespace, coalesce(sum({size}), 0) FROM list_values "
            "GROUP BY namespace"
        )
        return [(namespace, int(used)) for namespace, used in cursor.fetchall()]

    def erase_usage(self, cursor: Any, low: str, high: str) -> None:
        p = self.placeholder
        cursor.execute(f"DELETE FROM storage_usage WHERE root >= {p} AND root < {p}", (low, high))

    @abstractmethod
    def to_db_time(self, when: datetime) -> Any: ...

    @abstractmethod
    def from_db_time(self, raw: Any) -> datetime: ...
