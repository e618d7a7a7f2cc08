"""Django's SQLite backend, except that a database file it creates is its owner's alone.

The file holds every project's data, sessions and token digests; seed 002 asks that fresh
database files be created owner-only (0o600) rather than with the process umask's usual
0o644. SQLite gives its ``-wal`` and ``-shm`` files the main file's mode. Settings name this
module as the ENGINE for every SQLite URL (``kanban.environment.database_from_url``).
"""

from __future__ import annotations

import os
from typing import Any

from django.db.backends.sqlite3 import base

OWNER_ONLY = 0o600


def create_owner_only(path: str) -> None:
    """Create ``path`` empty with mode 0o600 unless it exists (an existing file keeps its
    mode: the operator chose it). In-memory databases have no file."""
    if path == ":memory:" or path.startswith("file:"):
        return
    # The embedded default must work from a fresh checkout: SQLite creates the file, not its
    # folder. Done here, when a connection is made, not when settings are imported.
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_ONLY)
    except FileExistsError:
        return
    os.close(descriptor)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        create_owner_only(str(conn_params["database"]))
        return super().get_new_connection(conn_params)
