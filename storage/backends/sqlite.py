"""SQLite: one writer at a time, so a counter row in the same transaction is the sequence.

The connection runs with ``transaction_mode = IMMEDIATE`` (see settings), so the counter
row is read and bumped under the database write lock; a rolled-back transaction rewinds it.
BINARY collation orders keys by UTF-8 bytes, which is code point order.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from storage.backends.base import Dialect


class SqliteDialect(Dialect):
    vendor = "sqlite"
    placeholder = "?"
    create_statements: tuple[str, ...] = (
        """CREATE TABLE scalar_values (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            seq INTEGER NOT NULL,
            value TEXT NOT NULL,
            source TEXT,
            written_at TEXT NOT NULL,
            PRIMARY KEY (namespace, key)) WITHOUT ROWID""",
        """CREATE TABLE list_values (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            seq INTEGER NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (namespace, key, seq)) WITHOUT ROWID""",
        """CREATE TABLE storage_sequence (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last INTEGER NOT NULL)""",
        "INSERT INTO storage_sequence (id, last) VALUES (1, 0)",
    )
    history_statements = (
        """CREATE TABLE IF NOT EXISTS value_history (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            seq INTEGER NOT NULL,
            value TEXT,
            source TEXT,
            written_at TEXT NOT NULL,
            PRIMARY KEY (namespace, key, seq)) WITHOUT ROWID""",
        "CREATE INDEX IF NOT EXISTS value_history_written_at ON value_history (written_at)",
    )
    usage_statements = (
        """CREATE TABLE IF NOT EXISTS storage_usage (
            root TEXT NOT NULL PRIMARY KEY,
            bytes INTEGER NOT NULL) WITHOUT ROWID""",
    )
    create_statements = (*create_statements, *history_statements, *usage_statements)
    drop_statements = (*Dialect.table_drops, "DROP TABLE IF EXISTS storage_sequence")
    # octet_length() is SQLite 3.43's; a text cast to a blob is its UTF-8 bytes.
    value_bytes = "length(CAST(value AS BLOB))"

    get_value = (
        "SELECT seq, value, source, written_at FROM scalar_values WHERE namespace = ? AND key = ?"
    )
    get_write = "SELECT seq, source, written_at FROM scalar_values WHERE namespace = ? AND key = ?"
    read_list_asc = (
        "SELECT seq, value FROM list_values WHERE namespace = ? AND key = ? AND seq > ? "
        "ORDER BY seq ASC LIMIT ?"
    )
    read_list_desc = (
        "SELECT seq, value FROM list_values WHERE namespace = ? AND key = ? AND seq < ? "
        "ORDER BY seq DESC LIMIT ?"
    )
    delete_value = "DELETE FROM scalar_values WHERE namespace = ? AND key = ? RETURNING seq"
    delete_value_at = (
        "DELETE FROM scalar_values WHERE namespace = ? AND key = ? AND seq = ? RETURNING seq"
    )
    delete_list = "DELETE FROM list_values WHERE namespace = ? AND key = ?"
    current_seq_of = "SELECT seq FROM scalar_values WHERE namespace = ? AND key = ?"
    is_empty = (
        "SELECT 1 FROM scalar_values UNION ALL SELECT 1 FROM list_values "
        "UNION ALL SELECT 1 FROM value_history LIMIT 1"
    )

    #: As Django's own transactions here (``transaction_mode``): the write lock from BEGIN.
    begin = "BEGIN IMMEDIATE"

    def allocate_seq(self, cursor: Any) -> int:
        cursor.execute("UPDATE storage_sequence SET last = last + 1 WHERE id = 1 RETURNING last")
        return int(cursor.fetchone()[0])

    def lock_namespace(self, cursor: Any, namespace: str) -> None:
        # SQLite has one writer at a time, so the database write lock is every namespace's
        # lock. IMMEDIATE transactions hold it from BEGIN; this no-op write takes it at once
        # even on a connection running DEFERRED transactions.
        cursor.execute("UPDATE storage_sequence SET last = last WHERE id = 1")

    def upsert(self, cursor: Any, params: tuple[Any, ...], keep: int) -> int:
        seq = self.allocate_seq(cursor)
        namespace, key, value, source, written_at = params
        cursor.execute(
            "INSERT INTO scalar_values (namespace, key, seq, value, source, written_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, key) DO UPDATE SET "
            "seq = excluded.seq, value = excluded.value, source = excluded.source, "
            "written_at = excluded.written_at",
            (namespace, key, seq, value, source, written_at),
        )
        return self._kept(cursor, params, seq, keep)

    def insert_absent(self, cursor: Any, params: tuple[Any, ...], keep: int) -> int | None:
        seq = self.allocate_seq(cursor)
        namespace, key, value, source, written_at = params
        cursor.execute(
            "INSERT INTO scalar_values (namespace, key, seq, value, source, written_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, key) DO NOTHING",
            (namespace, key, seq, value, source, written_at),
        )
        return self._kept(cursor, params, seq, keep) if cursor.rowcount == 1 else None

    def update_at(
        self, cursor: Any, params: tuple[Any, ...], expected_seq: int, keep: int
    ) -> int | None:
        seq = self.allocate_seq(cursor)
        namespace, key, value, source, written_at = params
        cursor.execute(
            "UPDATE scalar_values SET seq = ?, value = ?, source = ?, written_at = ? "
            "WHERE namespace = ? AND key = ? AND seq = ?",
            (seq, value, source, written_at, namespace, key, expected_seq),
        )
        return self._kept(cursor, params, seq, keep) if cursor.rowcount == 1 else None

    def _kept(self, cursor: Any, params: tuple[Any, ...], seq: int, keep: int) -> int:
        if keep:
            namespace, key, value, source, written_at = params
            self.keep_version(cursor, (namespace, key, seq, value, source, written_at), keep)
        return seq

    def append(self, cursor: Any, namespace: str, key: str, value: str) -> int:
        seq = self.allocate_seq(cursor)
        cursor.execute(
            "INSERT INTO list_values (namespace, key, seq, value) VALUES (?, ?, ?, ?)",
            (namespace, key, seq, value),
        )
        return seq

    def select_values(self, cursor: Any, namespace: str, keys: list[str]) -> list[tuple[Any, ...]]:
        marks = ", ".join("?" * len(keys))
        cursor.execute(
            "SELECT key, seq, value, source, written_at FROM scalar_values "
            f"WHERE namespace = ? AND key IN ({marks})",
            (namespace, *keys),
        )
        return list(cursor.fetchall())

    def last_seq(self, cursor: Any) -> int:
        cursor.execute("SELECT last FROM storage_sequence WHERE id = 1")
        return int(cursor.fetchone()[0])

    def advance_seq(self, cursor: Any, at_least: int) -> None:
        cursor.execute("UPDATE storage_sequence SET last = max(last, ?) WHERE id = 1", (at_least,))

    def to_db_time(self, when: datetime) -> Any:
        return when.astimezone(UTC).isoformat()

    def from_db_time(self, raw: Any) -> datetime:
        return datetime.fromisoformat(raw)
