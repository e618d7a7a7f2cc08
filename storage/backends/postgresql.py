"""PostgreSQL: a real sequence, and seq taken *after* the row lock on every update.

``nextval`` in ``DO UPDATE SET`` / ``UPDATE ... SET`` runs once the row is locked, so a
key's revisions strictly increase in commit order even when writers race. Keys use the
"C" collation so ordering and prefix ranges are by code point, exactly as on SQLite.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

import psycopg

from storage.backends.base import CountedSet, Dialect, SetCounted

_NEXT = "nextval('storage_seq')"


class PostgresDialect(Dialect):
    vendor = "postgresql"
    placeholder = "%s"
    create_statements: tuple[str, ...] = (
        "CREATE SEQUENCE IF NOT EXISTS storage_seq AS bigint",
        """CREATE TABLE scalar_values (
            namespace text COLLATE "C" NOT NULL,
            key text COLLATE "C" NOT NULL,
            seq bigint NOT NULL,
            value text NOT NULL,
            source text,
            written_at timestamptz NOT NULL,
            PRIMARY KEY (namespace, key))""",
        """CREATE TABLE list_values (
            namespace text COLLATE "C" NOT NULL,
            key text COLLATE "C" NOT NULL,
            seq bigint NOT NULL,
            value text NOT NULL,
            PRIMARY KEY (namespace, key, seq))""",
    )
    history_statements = (
        """CREATE TABLE IF NOT EXISTS value_history (
            namespace text COLLATE "C" NOT NULL,
            key text COLLATE "C" NOT NULL,
            seq bigint NOT NULL,
            value text,
            source text,
            written_at timestamptz NOT NULL,
            PRIMARY KEY (namespace, key, seq))""",
        "CREATE INDEX IF NOT EXISTS value_history_written_at ON value_history (written_at)",
    )
    usage_statements = (
        """CREATE TABLE IF NOT EXISTS storage_usage (
            root text COLLATE "C" PRIMARY KEY,
            bytes bigint NOT NULL)""",
    )
    create_statements = (*create_statements, *history_statements, *usage_statements)
    drop_statements = (*Dialect.table_drops, "DROP SEQUENCE IF EXISTS storage_seq")
    value_bytes = "octet_length(value)"

    get_value = (
        "SELECT seq, value, source, written_at FROM scalar_values WHERE namespace = %s AND key = %s"
    )
    get_write = (
        "SELECT seq, source, written_at FROM scalar_values WHERE namespace = %s AND key = %s"
    )
    read_list_asc = (
        "SELECT seq, value FROM list_values WHERE namespace = %s AND key = %s AND seq > %s "
        "ORDER BY seq ASC LIMIT %s"
    )
    read_list_desc = (
        "SELECT seq, value FROM list_values WHERE namespace = %s AND key = %s AND seq < %s "
        "ORDER BY seq DESC LIMIT %s"
    )
    delete_value = "DELETE FROM scalar_values WHERE namespace = %s AND key = %s RETURNING seq"
    delete_value_at = (
        "DELETE FROM scalar_values WHERE namespace = %s AND key = %s AND seq = %s RETURNING seq"
    )
    delete_list = "DELETE FROM list_values WHERE namespace = %s AND key = %s"
    current_seq_of = "SELECT seq FROM scalar_values WHERE namespace = %s AND key = %s"
    is_empty = (
        "SELECT 1 FROM scalar_values UNION ALL SELECT 1 FROM list_values "
        "UNION ALL SELECT 1 FROM value_history LIMIT 1"
    )

    _upsert = (
        "INSERT INTO scalar_values (namespace, key, seq, value, source, written_at) "
        f"VALUES (%s, %s, {_NEXT}, %s, %s, %s) ON CONFLICT (namespace, key) DO UPDATE SET "
        f"seq = {_NEXT}, value = EXCLUDED.value, source = EXCLUDED.source, "
        "written_at = EXCLUDED.written_at RETURNING seq"
    )
    _insert_absent = (
        "INSERT INTO scalar_values (namespace, key, seq, value, source, written_at) "
        f"VALUES (%s, %s, {_NEXT}, %s, %s, %s) ON CONFLICT (namespace, key) DO NOTHING "
        "RETURNING seq"
    )
    _update_at = (
        f"UPDATE scalar_values SET seq = {_NEXT}, value = %s, source = %s, written_at = %s "
        "WHERE namespace = %s AND key = %s AND seq = %s RETURNING seq"
    )
    _append = (
        f"INSERT INTO list_values (namespace, key, seq, value) VALUES (%s, %s, {_NEXT}, %s) "
        "RETURNING seq"
    )

    def cursor(self, driver_connection: Any) -> Any:
        # Django hands out client-side binding cursors, which interpolate every query in
        # Python and cannot prepare; the engine's few statements run on every call, so they
        # bind on the server and psycopg prepares them after a few uses per connection.
        return psycopg.Cursor(driver_connection)

    #: The sequence is ``nextval`` inside the INSERT or UPDATE itself.
    one_statement_writes = True

    def transaction(self, driver_connection: Any) -> Any:
        return driver_connection.transaction()

    def allocate_seq(self, cursor: Any) -> int:
        cursor.execute(f"SELECT {_NEXT}", prepare=True)
        return int(cursor.fetchone()[0])

    def lock_namespace(self, cursor: Any, namespace: str) -> None:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_lock_id(namespace),))

    def set_counted(self, cursor: Any, write: CountedSet) -> SetCounted:
        """One statement, as a set without counting: what the write replaces (``old``) and
        the versions it drops (``pruned``) are measured in it and the usage row changed by
        the difference. ``old`` reads the statement's snapshot, which is exact because the
        project's lock, taken by the statement before, keeps every other writer out."""
        params, keep, added = write.params, write.keep, write.added
        namespace, key, value, source, written_at = params
        if write.expected_seq is None:
            statement, arguments = self._insert_absent, params
        elif isinstance(write.expected_seq, int):
            statement = self._update_at
            arguments = (value, source, written_at, namespace, key, write.expected_seq)
        else:
            statement, arguments = self._upsert, params
        delta = "%s - coalesce((SELECT n FROM old), 0) - coalesce((SELECT sum(n) FROM pruned), 0)"
        pruned = "SELECT NULL::int AS n WHERE false"
        if keep:
            pruned = (
                "DELETE FROM value_history WHERE namespace = %s AND key = %s "
                "AND EXISTS (SELECT 1 FROM w) AND seq <= (SELECT seq FROM value_history "
                "WHERE namespace = %s AND key = %s ORDER BY seq DESC LIMIT 1 OFFSET %s) "
                "RETURNING octet_length(value) AS n"
            )
        kept = (
            "INSERT INTO value_history (namespace, key, seq, value, source, written_at) "
            "SELECT namespace, key, seq, value, source, written_at FROM w"
            if keep
            else "SELECT 1"
        )
        cursor.execute(
            "WITH old AS (SELECT octet_length(value) AS n FROM scalar_values "
            "WHERE namespace = %s AND key = %s), "
            f"w AS ({statement.removesuffix('RETURNING seq')}"
            "RETURNING namespace, key, seq, value, source, written_at), "
            f"kept AS ({kept}), pruned AS ({pruned}), "
            f"u AS (INSERT INTO storage_usage (root, bytes) SELECT %s, {delta} "
            f"WHERE EXISTS (SELECT 1 FROM w) AND {delta} <> 0 ON CONFLICT (root) "
            "DO UPDATE SET bytes = storage_usage.bytes + excluded.bytes RETURNING bytes) "
            f"SELECT seq, {delta}, (SELECT bytes FROM u) FROM w",
            (
                namespace,
                key,
                *arguments,
                *((namespace, key, namespace, key, keep - 1) if keep else ()),
                write.root,
                added,
                added,
                added,
            ),
            prepare=True,
        )
        row = cursor.fetchone()
        if row is None:
            return SetCounted(None, 0, None)
        return SetCounted(int(row[0]), int(row[1]), None if row[2] is None else int(row[2]))

    def upsert(self, cursor: Any, params: tuple[Any, ...], keep: int) -> int:
        seq = self._write(cursor, self._upsert, params, params, keep)
        assert seq is not None
        return seq

    def insert_absent(self, cursor: Any, params: tuple[Any, ...], keep: int) -> int | None:
        return self._write(cursor, self._insert_absent, params, params, keep)

    def update_at(
        self, cursor: Any, params: tuple[Any, ...], expected_seq: int, keep: int
    ) -> int | None:
        namespace, key, value, source, written_at = params
        arguments = (value, source, written_at, namespace, key, expected_seq)
        return self._write(cursor, self._update_at, arguments, params, keep)

    def _write(
        self,
        cursor: Any,
        statement: str,
        arguments: tuple[Any, ...],
        params: tuple[Any, ...],
        keep: int,
    ) -> int | None:
        """One statement either way: with ``keep``, the write, its version kept and the
        key's versions past ``keep`` dropped, as one (so a lone set still needs no
        transaction around it). The sibling statements of a WITH share one snapshot: the
        prune does not see the version just kept, so it keeps ``keep - 1`` older ones."""
        if keep:
            namespace, key = params[0], params[1]
            statement = (
                f"WITH w AS ({statement.removesuffix('RETURNING seq')}"
                "RETURNING namespace, key, seq, value, source, written_at), "
                "kept AS (INSERT INTO value_history "
                "(namespace, key, seq, value, source, written_at) "
                "SELECT namespace, key, seq, value, source, written_at FROM w), "
                "pruned AS (DELETE FROM value_history WHERE namespace = %s AND key = %s "
                "AND EXISTS (SELECT 1 FROM w) AND seq <= (SELECT seq FROM value_history "
                "WHERE namespace = %s AND key = %s ORDER BY seq DESC LIMIT 1 OFFSET %s)) "
                "SELECT seq FROM w"
            )
            arguments = (*arguments, namespace, key, namespace, key, keep - 1)
        cursor.execute(statement, arguments, prepare=True)
        row = cursor.fetchone()
        return None if row is None else int(row[0])

    def append(self, cursor: Any, namespace: str, key: str, value: str) -> int:
        cursor.execute(self._append, (namespace, key, value), prepare=True)
        return int(cursor.fetchone()[0])

    #: (namespace, keys) -> key, seq, value, source, written_at
    select_values_sql = (
        "SELECT key, seq, value, source, written_at FROM scalar_values "
        "WHERE namespace = %s AND key = ANY(%s)"
    )

    def select_values(self, cursor: Any, namespace: str, keys: list[str]) -> list[tuple[Any, ...]]:
        cursor.execute(self.select_values_sql, (namespace, keys), prepare=True)
        return list(cursor.fetchall())

    def last_seq(self, cursor: Any) -> int:
        cursor.execute("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM storage_seq")
        return int(cursor.fetchone()[0])

    def advance_seq(self, cursor: Any, at_least: int) -> None:
        if at_least > self.last_seq(cursor):
            cursor.execute("SELECT setval('storage_seq', %s, true)", (at_least,))

    def to_db_time(self, when: datetime) -> Any:
        return when

    def from_db_time(self, raw: Any) -> datetime:
        assert isinstance(raw, datetime)
        return raw


def advisory_lock_id(namespace: str) -> int:
    """A stable signed 64-bit id for a namespace (``hash()`` differs between processes).

    Two namespaces sharing an id only serialize each other's writers; nothing breaks.
    """
    digest = hashlib.blake2b(namespace.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)
