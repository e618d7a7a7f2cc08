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
from collections.abc import Iterator
from uuid import UUID

from django.db import connection, transaction

from kanban.models import Project
from storage.errors import ErrorCode, KanbanError


@contextlib.contextmanager
def project_writing(*, project_id: UUID) -> Iterator[None]:
    """Run the block's writes in one transaction that holds the project against deletion."""
    lock = " FOR KEY SHARE" if connection.vendor == "postgresql" else ""
    table, key = Project._meta.db_table, Project._meta.pk
    assert key is not None
    value = key.get_db_prep_value(project_id, connection)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {table} WHERE {key.column} = %s{lock}", [value])
        if cursor.fetchone() is None:
            raise KanbanError(ErrorCode.NOT_FOUND, "no such project")
        yield


def project_lock_for_delete(*, project_id: UUID) -> None:
    """Inside the deletion's transaction: wait for the writes holding the project, and keep
    new ones out until it commits."""
    list(Project.objects.select_for_update().filter(pk=project_id).values_list("pk", flat=True))
