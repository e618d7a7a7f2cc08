"""KV and PersistentValue semantics over the engine, addressed by project id.

Four separate datasets per project (KV and PersistentValue, each in project and conversation
scope); no other scope exists. Revisions are the engine's seq rendered as opaque strings.
The input rules (key, JSON, size, depth) live here, once, for every transport.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final
from uuid import UUID

from django.conf import settings

from storage import engine, events, history, limits
from storage.addresses import Value
from storage.errors import Conflict, ErrorCode, KanbanError, invalid_argument
from storage.namespaces import (
    PROJECTS_ROOT,
    Domain,
    dataset_namespace,
    dataset_prefix,
    dataset_value,
    parse_namespace,
    project_root,
)
from storage.writes import ANY, ExpectedSeq, delete_value, set_value

#: ``update`` gives up after this many compare-and-set rounds under contention.
MAX_UPDATE_ATTEMPTS: Final = 64


@dataclass(frozen=True, slots=True)
class Dataset:
    project_id: UUID
    domain: Domain = "kv"
    conversation_id: str | None = None

    def address(self, key: str) -> Value:
        return dataset_value(self.project_id, self.domain, key, self.conversation_id)

    @property
    def namespace(self) -> str:
        return dataset_namespace(self.project_id, self.domain, self.conversation_id)


@dataclass(frozen=True, slots=True)
class Entry:
    key: str
    value: Any
    revision: str
    updated_at: datetime
    source: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class KvChange:
    """A committed write to one key of one dataset (``revision`` of the write itself), with
    the value's JSON text when it was set and the write's source as stored (JSON text)."""

    dataset: Dataset
    key: str
    revision: str
    deleted: bool
    text: str | None = None
    source: str | None = None


def revision_of(seq: int) -> str:
    return str(seq)


def parse_revision(revision: object) -> int:
    """Turn a client-supplied opaque revision back into a seq, or refuse it."""
    if (
        not isinstance(revision, str)
        or not revision.isdecimal()
        or not revision.isascii()
        or len(revision) > limits.MAX_REVISION_CHARS
        or not 0 < int(revision) <= limits.MAX_SEQ
    ):
        raise invalid_argument("expectedRevision is not a revision this server issued")
    return int(revision)


def _expected(expected_revision: str | object | None) -> ExpectedSeq:
    if expected_revision is ANY or expected_revision is None:
        return expected_revision  # type: ignore[return-value]
    return parse_revision(expected_revision)


def _max_bytes() -> int:
    return int(settings.KANBAN_MAX_VALUE_BYTES)


def _keep() -> int:
    """How many versions of each value its history keeps (``KANBAN_HISTORY_REVISIONS``)."""
    return int(settings.KANBAN_HISTORY_REVISIONS)


def project_bytes_limit() -> int:
    """How many bytes one project may store in all (``KANBAN_PROJECT_BYTES``)."""
    return int(settings.KANBAN_PROJECT_BYTES)


def _entry(stored: engine.StoredValue) -> Entry:
    return Entry(
        key=stored.address.key,
        value=stored.value,
        revision=revision_of(stored.seq),
        updated_at=stored.written_at,
        source=stored.source,
    )


def kv_get(*, dataset: Dataset, key: str) -> Entry | None:
    stored = engine.get_value(dataset.address(key))
    return None if stored is None else _entry(stored)


def kv_erase_project(*, project_id: UUID) -> int:
    """Erase all four datasets of a project (KV and PersistentValue, project and every
    conversation scope), as its deletion does: a project re-created under the same UUID
    inherits nothing."""
    return engine.erase_namespaces(project_root(project_id))


def kv_stored_project_ids() -> set[UUID]:
    """Every project id with anything stored under its root. Storage knows no projects:
    whoever does compares (``manage.py prune`` erases what no project owns)."""
    found = set()
    for namespace in engine.namespaces_under(PROJECTS_ROOT):
        parsed = parse_namespace(namespace)
        if parsed is not None:
            found.add(parsed[0])
    return found


def kv_latest_write(*, project_id: UUID) -> engine.LastWrite | None:
    """When any of a project's four datasets last changed, and the write's source."""
    return engine.latest_write(project_root(project_id))


def kv_get_many(*, dataset: Dataset, keys: list[str]) -> list[Entry | None]:
    """Named keys in one round trip, in the order asked (None: absent). No listing: the
    caller names every key (``check_user_keys``)."""
    found = engine.get_values([dataset.address(key) for key in keys])
    return [None if stored is None else _entry(stored) for stored in found]


async def akv_get(*, dataset: Dataset, key: str) -> Entry | None:
    """``kv_get`` on the event loop (``storage.aio.reads_on_loop``)."""
    stored = await engine.aget_value(dataset.address(key))
    return None if stored is None else _entry(stored)


async def akv_get_many(*, dataset: Dataset, keys: list[str]) -> list[Entry | None]:
    """``kv_get_many`` on the event loop."""
    found = await engine.aget_values([dataset.address(key) for key in keys])
    return [None if stored is None else _entry(stored) for stored in found]


def kv_set(
    *,
    dataset: Dataset,
    key: str,
    value: Any,
    source: Mapping[str, Any],
    expected_revision: str | object | None = ANY,
    file_bytes: int = 0,
) -> str:
    """Write a value; with ``expected_revision`` (None = must be absent) as compare-and-set.
    ``file_bytes``: the bytes of the project's files this write adds (negative: frees),
    counted with it in the project's usage (``engine.commit``).

    Raises ``Conflict`` (nothing written) when the revision does not match.
    """
    write = set_value(
        dataset.address(key),
        value,
        expected_seq=_expected(expected_revision),
        source=source,
        max_bytes=_max_bytes(),
        keep=_keep(),
    )
    (result,) = engine.commit(
        [write],
        max_project_bytes=project_bytes_limit(),
        file_bytes={project_root(dataset.project_id): file_bytes},
    )
    assert result.seq is not None
    return revision_of(result.seq)


def kv_compare_and_set(
    *,
    dataset: Dataset,
    key: str,
    expected_revision: str | None,
    value: Any,
    source: Mapping[str, Any],
) -> str:
    return kv_set(
        dataset=dataset,
        key=key,
        value=value,
        source=source,
        expected_revision=expected_revision,
    )


def kv_delete(
    *,
    dataset: Dataset,
    key: str,
    source: Mapping[str, Any] | None = None,
    expected_revision: str | object = ANY,
    file_bytes: int = 0,
) -> bool:
    """True when an entry was removed; an absent key is not an error. No recycle bin, but
    the history keeps who deleted it and when, beside the versions before. With
    ``expected_revision``, only that revision is deleted (``Conflict`` otherwise);
    ``file_bytes`` as ``kv_set``'s."""
    write = delete_value(
        dataset.address(key), expected_seq=_expected(expected_revision), source=source, keep=_keep()
    )
    (result,) = engine.commit([write], file_bytes={project_root(dataset.project_id): file_bytes})
    return result.applied


def kv_history(
    *, dataset: Dataset, key: str, before: str | None = None, limit: int | None = None
) -> list[history.Version]:
    """A key's kept versions, newest first (its current value among them), within
    ``KANBAN_HISTORY_DAYS``; ``before`` is a revision: the page of versions older than it."""
    return history.read_history(
        dataset.address(key),
        before=None if before is None else parse_revision(before),
        since=_history_since(datetime.now(UTC)),
        limit=limit,
    )


def kv_history_purge(*, dataset: Dataset, key: str) -> int:
    """Delete every kept version of one key (its current value stays): how many went. A
    deleted key's versions count toward its project's usage until pruned or purged."""
    return history.purge_history(dataset.address(key))


def kv_project_bytes(*, project_id: UUID) -> int:
    """The bytes a project stores: values, kept versions and documents."""
    return engine.project_bytes(project_root(project_id))


def kv_history_prune(*, now: datetime | None = None, using: str = "default") -> int:
    """Delete every kept version, of every dataset, older than ``KANBAN_HISTORY_DAYS`` (as of
    ``now``): no read shows one any more. How many went."""
    since = _history_since(now or datetime.now(UTC))
    return history.prune_history(before=since, using=using)


def _history_since(now: datetime) -> datetime:
    return now - timedelta(days=int(settings.KANBAN_HISTORY_DAYS))


def kv_update(
    *,
    dataset: Dataset,
    key: str,
    fn: Callable[[Any], Any],
    source: Mapping[str, Any],
    max_attempts: int = MAX_UPDATE_ATTEMPTS,
) -> tuple[Any, str]:
    """Read-modify-write as a compare-and-set loop on the revision.

    ``fn`` receives the current value (``None`` when absent; use ``kv_get`` first if absence
    must be told apart from a stored null) and may run more than once: it must be pure.
    """
    for _ in range(max_attempts):
        current = kv_get(dataset=dataset, key=key)
        new_value = fn(None if current is None else current.value)
        try:
            revision = kv_set(
                dataset=dataset,
                key=key,
                value=new_value,
                source=source,
                expected_revision=None if current is None else current.revision,
            )
        except Conflict:
            continue
        return new_value, revision
    raise KanbanError(
        ErrorCode.CONFLICT, f"gave up after {max_attempts} conflicting updates of {key!r}"
    )


def kv_scan(
    *,
    dataset: Dataset,
    prefix: str = "",
    start_after: str | None = None,
    limit: int = 100,
) -> list[Entry]:
    """One bounded, key-ascending page of a dataset (for viewers, never for plugins)."""
    address = dataset_prefix(dataset.project_id, dataset.domain, prefix, dataset.conversation_id)
    rows = engine.scan_values(address, start_after=start_after, limit=limit)
    return [_entry(row) for row in rows]


KvListener = Callable[[Sequence[KvChange]], None]


def add_kv_listener(listener: KvListener) -> Callable[[], None]:
    """Hear about committed writes to any project dataset, after commit."""

    def translate(changes: Sequence[events.Change]) -> None:
        mapped = []
        for change in changes:
            if change.kind != "value":
                continue
            parsed = parse_namespace(change.namespace)
            if parsed is None:
                continue
            project_id, domain, conversation_id = parsed
            mapped.append(
                KvChange(
                    Dataset(project_id, domain, conversation_id),
                    change.key,
                    revision_of(change.seq),
                    change.deleted,
                    change.text,
                    change.source,
                )
            )
        if mapped:
            listener(mapped)

    return events.CHANGES.listen(translate)
