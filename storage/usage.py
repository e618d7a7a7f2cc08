"""What each project stores: one ``storage_usage`` row per project root holding the UTF-8
bytes of its values (Knowledge documents among them), kept versions and list elements.

A write changes the row in its own transaction, so the count is exact and a limit holds
against concurrent writers: the row is locked before anything of the project is read or
written (on PostgreSQL ``FOR UPDATE``; on SQLite the IMMEDIATE write lock already is), so
what a write replaces or drops is measured on the state it changes, and a second writer
waits for the first to commit. Nothing here sums a project's data, except ``recount``
(a migration's or a load's).
"""

from __future__ import annotations

from typing import Any

from storage.backends import Dialect
from storage.errors import ErrorCode, KanbanError
from storage.namespaces import parse_namespace, project_root
from storage.writes import AppendList, DeleteList, DeleteValue, SetValue, Write


def root_of(namespace: str) -> str | None:
    """The project root whose usage ``namespace`` counts toward (None: not a project's)."""
    if not namespace.startswith("project."):
        return None
    parsed = parse_namespace(namespace)
    return None if parsed is None else project_root(parsed[0])


def roots_of(writes: Any) -> list[str]:
    """The distinct project roots a commit touches, in the one order every locker uses."""
    roots = {root_of(write.address.namespace) for write in writes}
    return sorted(root for root in roots if root is not None)


def text_bytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def quota_exceeded(root: str, used: int, limit: int) -> KanbanError:
    project = root.removeprefix("project.").rstrip(".")
    return KanbanError(
        ErrorCode.QUOTA_EXCEEDED,
        f"this write would bring project {project} to {used} bytes stored (values, kept "
        f"versions and documents) of its {limit}; nothing was written. Delete values or "
        "purge a key's kept versions to make room",
        used=used,
        limit=limit,
    )


class Ledger:
    """The usage rows of one commit: locked when made, changed once by ``settle``."""

    def __init__(self, dialect: Dialect, cursor: Any, roots: list[str]) -> None:
        self.dialect = dialect
        self.cursor = cursor
        self.before = {root: dialect.lock_usage(cursor, root) for root in roots}
        self.delta = dict.fromkeys(roots, 0)

    def freed_by(self, write: Write) -> tuple[str | None, int]:
        """Before ``write`` applies: its root and the bytes it will take away."""
        root = root_of(write.address.namespace)
        if root is None:
            return None, 0
        namespace, key = write.address.namespace, write.address.key
        if isinstance(write, SetValue | DeleteValue):
            current, dropped = self.dialect.replaced_bytes(self.cursor, namespace, key, write.keep)
            if current is None and isinstance(write, DeleteValue):
                return root, 0  # nothing to delete: nothing kept, nothing dropped
            return root, (current or 0) + dropped
        if isinstance(write, DeleteList):
            return root, self.dialect.list_bytes(self.cursor, namespace, key)
        return root, 0

    def applied(self, write: Write, root: str, freed: int) -> None:
        """After ``write`` applied: count what it stored, less what it took away."""
        added = 0
        if isinstance(write, SetValue):
            added = text_bytes(write.text) * (2 if write.keep else 1)
        elif isinstance(write, AppendList):
            added = text_bytes(write.text)
        self.delta[root] += added - freed

    def settle(self, limit: int | None) -> None:
        """Refuse (raising inside the transaction, which then writes nothing) a project that
        grew past ``limit``; a write that shrinks it passes, whatever it holds."""
        for root, delta in self.delta.items():
            used = self.before[root] + delta
            if limit is not None and delta > 0 and used > limit:
                raise quota_exceeded(root, used, limit)
            if delta:
                self.dialect.set_usage(self.cursor, root, used)


def recount(dialect: Dialect, cursor: Any) -> None:
    """Count every project's bytes anew from what is stored (after a load, a migration)."""
    totals: dict[str, int] = {}
    for namespace, used in dialect.namespace_bytes(cursor):
        root = root_of(namespace)
        if root is not None:
            totals[root] = totals.get(root, 0) + used
    cursor.execute("DELETE FROM storage_usage")
    for root, used in sorted(totals.items()):
        dialect.lock_usage(cursor, root)
        dialect.set_usage(cursor, root, used)
