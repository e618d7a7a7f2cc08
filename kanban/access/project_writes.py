"""A write to a project's data and the project's deletion never interleave.

The access decision reads the project before a write; the write itself comes later, and a
delete committed in between left the write's rows behind, owned by no project. So a write
holds the project's row for its transaction: ``FOR KEY SHARE`` on PostgreSQL, which writers
share with one another and with renames, and which the deletion's ``FOR UPDATE`` waits for
(``project_delete`` takes it before erasing). A write that comes after the deletion finds
no row and is refused as ``not_found``. SQLite's transactions (``IMMEDIATE``) already run
one at a time; there the read only checks the project is still there.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from uuid import UUID

from django.db import DEFAULT_DB_ALIAS, connection, transaction

from kanban.models import Project
from storage.engine import driver_cursor
from storage.errors import ErrorCode, KanbanError


@contextlib.contextmanager
def project_writing(*, project_id: UUID) -> Iterator[None]:
    """Run the block's writes in one transaction that holds the project against deletion."""
    key = Project._meta.pk
    assert key is not None
    value = key.get_db_prep_value(project_id, connection)
    with transaction.atomic():
        # The driver's own cursor, as the engine's writes after it use: Django's cursor
        # interpolated the statement in Python on every write (bench/write_profile.py).
        with driver_cursor(DEFAULT_DB_ALIAS) as (_, cursor):
            cursor.execute(_hold_sql(connection.vendor), (value,))
            found = cursor.fetchone()
        if found is None:
            raise KanbanError(ErrorCode.NOT_FOUND, "no such project")
        yield


@functools.cache
def _hold_sql(vendor: str) -> str:
    key = Project._meta.pk
    assert key is not None
    if vendor == "postgresql":
        return f"SELECT 1 FROM {Project._meta.db_table} WHERE {key.column} = %s FOR KEY SHARE"
    return f"SELECT 1 FROM {Project._meta.db_table} WHERE {key.column} = ?"


def project_lock_for_delete(*, project_id: UUID) -> None:
    """Inside the deletion's transaction: wait for the writes holding the project, and keep
    new ones out until it commits."""
    list(Project.objects.select_for_update().filter(pk=project_id).values_list("pk", flat=True))
