"""What each project stores: one ``storage_usage`` row per project root holding the UTF-8
bytes of its values (Knowledge documents among them), kept versions and list elements.

A write changes the row in its own transaction, so the count is exact and a limit holds
against concurrent writers: the project is locked before anything of it is read or written
(on PostgreSQL an advisory lock, which writes nothing; on SQLite the write lock), so what a
write replaces or drops is measured on the state it changes, and a second writer waits for
the first to commit. Nothing here sums a project's data, except ``recount``
(a migration's or a load's).
"""

from __future__ import annotations

from typing import Any

from storage.backends import Dialect
from storage.backends.base import CountedSet
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
    """The usage rows of one commit: their projects locked when made; a refusal checked by
    ``settle`` against what the rows hold after the commit's changes."""

    def __init__(self, dialect: Dialect, cursor: Any, roots: list[str]) -> None:
        self.dialect = dialect
        self.cursor = cursor
        for root in roots:
            dialect.lock_usage(cursor, root)
        #: How much each root changed in all, and what its row holds once changed.
        self.change = dict.fromkeys(roots, 0)
        self.used: dict[str, int | None] = dict.fromkeys(roots)
        #: Changes of writes other than sets, written by ``settle``.
        self.pending = dict.fromkeys(roots, 0)

    def set(self, write: SetValue, params: tuple[Any, ...], root: str) -> int | None:
        """Apply a set of a project's value, its usage row changed in the same step (one
        statement on PostgreSQL, the hot path): its seq, or None when not applied."""
        added = text_bytes(write.text) * (2 if write.keep else 1)
        seq, change, used = self.dialect.set_counted(
            self.cursor, CountedSet(params, write.expected_seq, write.keep, root, added)
        )
        self.change[root] += change
        if used is not None:
            self.used[root] = used
        return seq

    def freed_by(self, write: Write) -> tuple[str | None, int]:
        """Before a write other than a set applies: its root and the bytes it will take
        away."""
        root = root_of(write.address.namespace)
        if root is None or isinstance(write, SetValue):
            return None, 0
        namespace, key = write.address.namespace, write.address.key
        if isinstance(write, DeleteValue):
            current, dropped = self.dialect.replaced_bytes(self.cursor, namespace, key, write.keep)
            if current is None:
                return root, 0  # nothing to delete: nothing kept, nothing dropped
            return root, current + dropped
        if isinstance(write, DeleteList):
            return root, self.dialect.list_bytes(self.cursor, namespace, key)
        return root, 0

    def applied(self, write: Write, root: str, freed: int) -> None:
        """After a write other than a set applied: what it stored less what it took away."""
        change = (text_bytes(write.text) if isinstance(write, AppendList) else 0) - freed
        self.change[root] += change
        self.pending[root] += change

    def charge(self, root: str, change: int) -> None:
        """Bytes a project keeps outside the engine (its files), added (or freed) by this
        commit: counted and limited as its values are."""
        self.change[root] += change
        self.pending[root] += change

    def settle(self, limit: int | None) -> None:
        """Refuse (raising inside the transaction, which then writes nothing) a project that
        grew past ``limit``; a commit that shrinks it passes, whatever it holds."""
        for root, change in self.change.items():
            if self.pending[root]:
                self.used[root] = self.dialect.add_usage(self.cursor, root, self.pending[root])
            used = self.used[root]
            if limit is not None and change > 0 and used is not None and used > limit:
                raise quota_exceeded(root, used, limit)


def recount(dialect: Dialect, cursor: Any) -> None:
    """Count every project's bytes anew from what is stored (after a load, a migration)."""
    totals: dict[str, int] = {}
    for namespace, used in dialect.namespace_bytes(cursor):
        root = root_of(namespace)
        if root is not None:
            totals[root] = totals.get(root, 0) + used
    cursor.execute("DELETE FROM storage_usage")
    for root, used in sorted(totals.items()):
        dialect.add_usage(cursor, root, used)
