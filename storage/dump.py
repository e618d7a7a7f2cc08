"""JSONL dump of the storage engine's data: every value, list element and kept version with
its original seq. It is the storage part of a deployment's backup (``manage.py backup``,
``kanban.backup``), not a backup by itself: users, boards and memberships live elsewhere.

Line 1 is a header carrying the highest seq ever allocated, so a load never lets the
sequence reuse a number even when the newest write was a delete. Every following line is
one transaction: a record object, or an array of records.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from django.db import transaction

from storage import jsoncodec, usage
from storage.addresses import Value, ValueList
from storage.engine import driver_cursor
from storage.errors import invalid_argument

FORMAT = "kanban-storage"
VERSION = 1
_BATCH = 2000
_OPS = {"value": "set", "list": "append", "history": "keep"}


def dump(out: IO[str], *, using: str = "default") -> int:
    """Write the whole store to ``out``; returns the number of records written."""
    count = 0
    with transaction.atomic(using=using), driver_cursor(using) as (dialect, cursor):
        header = {"format": FORMAT, "version": VERSION, "lastSeq": dialect.last_seq(cursor)}
        out.write(json.dumps(header) + "\n")
        cursor.execute(
            "SELECT 'value', namespace, key, seq, value, source, written_at FROM scalar_values "
            "UNION ALL SELECT 'list', namespace, key, seq, value, NULL, NULL FROM list_values "
            "UNION ALL SELECT 'history', namespace, key, seq, value, source, written_at "
            "FROM value_history ORDER BY 4, 1"
        )
        while rows := cursor.fetchmany(_BATCH):
            for kind, namespace, key, seq, text, source, written_at in rows:
                record = {"kind": kind, "op": _OPS[kind]}
                record.update(namespace=namespace, key=key, seq=int(seq))
                if kind != "list":
                    record["source"] = None if source is None else json.loads(source)
                    record["writtenAt"] = dialect.from_db_time(written_at).isoformat()
                if text is None:  # a kept deletion
                    record["deleted"] = True
                    out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
                    count += 1
                    continue
                head = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
                # The stored text is already canonical JSON: splice it in, never re-encode.
                out.write(f'{head[:-1]},"value":{text}}}\n')
                count += 1
    return count


def is_empty(*, using: str = "default") -> bool:
    """Whether the store holds no value, list element or kept version."""
    with driver_cursor(using) as (dialect, cursor):
        cursor.execute(dialect.is_empty)
        return cursor.fetchone() is None


def _records(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(lines, start=2):
        if not line.strip():
            continue
        parsed = jsoncodec.decode(line)
        for record in parsed if isinstance(parsed, list) else [parsed]:
            if not isinstance(record, dict):
                raise invalid_argument(f"line {number}: a record must be an object")
            yield number, record


def load(source: IO[str], *, replace: bool = False, using: str = "default") -> int:
    """Restore a dump exactly; all or nothing. Refuses a non-empty store unless ``replace``."""
    from datetime import datetime

    header_line = source.readline()
    try:
        header = json.loads(header_line)
    except json.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise invalid_argument("line 1: not a kanban-storage dump header")
    if header.get("version") != VERSION:
        raise invalid_argument(f"line 1: unsupported dump version {header.get('version')!r}")
    count = 0
    highest = int(header.get("lastSeq") or 0)
    with transaction.atomic(using=using), driver_cursor(using) as (dialect, cursor):
        cursor.execute(dialect.is_empty)
        if cursor.fetchone() is not None:
            if not replace:
                raise invalid_argument("the target store is not empty; pass replace to clear it")
            dialect.clear(cursor)
        for number, record in _records(source):
            kind, namespace, key = record.get("kind"), record.get("namespace"), record.get("key")
            seq = record.get("seq")
            if type(seq) is not int or seq <= 0:
                raise invalid_argument(f"line {number}: seq must be a positive integer")
            deleted = kind == "history" and record.get("deleted") is True
            text = None if deleted else jsoncodec.encode(record.get("value"))
            if kind in ("value", "history") and record.get("op") == _OPS[kind]:
                Value(namespace, key)  # type: ignore[arg-type]
                written = datetime.fromisoformat(record["writtenAt"])
                src = record.get("source")
                row = (
                    namespace,
                    key,
                    seq,
                    text,
                    None if src is None else json.dumps(src, separators=(",", ":")),
                    dialect.to_db_time(written),
                )
                if kind == "value":
                    dialect.restore_value(cursor, row)
                else:
                    dialect.restore_version(cursor, row)
            elif kind == "list" and record.get("op") == "append":
                ValueList(namespace, key)  # type: ignore[arg-type]
                dialect.restore_element(cursor, (namespace, key, seq, text))
            else:
                raise invalid_argument(f"line {number}: unknown record kind/op")
            highest = max(highest, seq)
            count += 1
        dialect.advance_seq(cursor, highest)
        usage.recount(dialect, cursor)  # a dump carries data only: its usage is counted anew
    return count
