"""What the staff data viewers show: one bounded page of a project's KV or PersistentValue,
and a project's Knowledge documents, each with its last write source.

Staff look at data as it is stored, outside any project's grants; the admin site decides
who is staff. Every read is bounded: a scan page, an index page, one document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar
from uuid import UUID

from storage import jsoncodec, knowledge
from storage.engine import LastWrite
from storage.errors import invalid_argument
from storage.history import Version
from storage.kv import (
    Dataset,
    Entry,
    kv_get,
    kv_history,
    kv_history_purge,
    kv_scan,
    kv_set,
    parse_revision,
    revision_of,
)

KV_PAGE_SIZE: Final = 100
HISTORY_PAGE_SIZE: Final = 20
DOCUMENT_PAGE_SIZE: Final = 25
PREVIEW_CHARS: Final = 200
#: The source fields a viewer shows, in order, with their labels.
SOURCE_FIELDS: Final = (
    ("user", "user"),
    ("via", "via"),
    ("consumerProject", "consumer project"),
    ("page", "page"),
    ("alias", "alias"),
    ("conversationId", "conversation"),
    ("runId", "run"),
    ("token", "token"),
    ("agent", "agent"),
    ("restoredFrom", "restored from"),
)

RowT = TypeVar("RowT")
ItemT = TypeVar("ItemT")


def value_preview(value: Any) -> str:
    text = jsoncodec.encode(value)
    if len(text) <= PREVIEW_CHARS:
        return text
    return text[:PREVIEW_CHARS] + "…"


def source_items(source: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The source's known fields as (label, text), in a fixed order."""
    if not source:
        return []
    return [(label, str(source[name])) for name, label in SOURCE_FIELDS if name in source]


@dataclass(frozen=True, slots=True)
class Page(Generic[RowT]):
    """One bounded page of a viewer's rows. ``next`` is what the following page starts
    from (the last key shown, the oldest revision shown, an index cursor): None when no
    page follows."""

    rows: list[RowT]
    next: str | None


def _one_more(items: list[ItemT], limit: int) -> tuple[list[ItemT], bool]:
    """A page read with one item more than it shows: the items shown, and whether more
    follow."""
    return items[:limit], len(items) > limit


@dataclass(frozen=True, slots=True)
class KvRow:
    entry: Entry
    preview: str
    source: list[tuple[str, str]]


def viewer_kv_page(
    *,
    dataset: Dataset,
    prefix: str = "",
    start_after: str | None = None,
    limit: int = KV_PAGE_SIZE,
) -> Page[KvRow]:
    """One key-ascending page of ``dataset``'s keys starting with ``prefix``."""
    entries = kv_scan(dataset=dataset, prefix=prefix, start_after=start_after, limit=limit + 1)
    shown, more = _one_more(entries, limit)
    rows = [KvRow(entry, value_preview(entry.value), source_items(entry.source)) for entry in shown]
    return Page(rows, shown[-1].key if more and shown else None)


@dataclass(frozen=True, slots=True)
class VersionRow:
    version: Version
    revision: str
    preview: str
    source: list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class KvHistoryPage(Page[VersionRow]):
    #: The key's revision now (None: absent): what a restore must still find to write.
    current_revision: str | None


def viewer_kv_history(
    *,
    dataset: Dataset,
    key: str,
    before: str | None = None,
    limit: int = HISTORY_PAGE_SIZE,
) -> KvHistoryPage:
    """One page of a key's kept versions, newest first, and its current revision."""
    versions = kv_history(dataset=dataset, key=key, before=before, limit=limit + 1)
    shown, more = _one_more(versions, limit)
    rows = [
        VersionRow(
            version,
            revision_of(version.seq),
            "" if version.deleted else value_preview(version.value),
            source_items(version.source),
        )
        for version in shown
    ]
    current = kv_get(dataset=dataset, key=key)
    return KvHistoryPage(
        rows,
        rows[-1].revision if more and rows else None,
        current.revision if current else None,
    )


def viewer_kv_restore(
    *,
    dataset: Dataset,
    key: str,
    revision: str,
    expected_revision: str | None,
    username: str,
) -> str:
    """Write the value a key had at ``revision`` again, as compare-and-set over
    ``expected_revision`` (the revision the staff member saw): a change made since is
    never overwritten (``Conflict``, nothing written). Returns the new revision."""
    seq = parse_revision(revision)
    older = kv_history(dataset=dataset, key=key, before=revision_of(seq + 1), limit=1)
    if not older or older[0].seq != seq:
        raise invalid_argument("no such version of this key is kept", field="revision")
    if older[0].deleted:
        raise invalid_argument("that version is a deletion; there is no value to restore")
    source = {"via": "admin", "user": username, "restoredFrom": revision}
    return kv_set(
        dataset=dataset,
        key=key,
        value=older[0].value,
        source=source,
        expected_revision=expected_revision,
    )


def viewer_kv_purge(*, dataset: Dataset, key: str) -> int:
    """Delete every kept version of a key (its current value stays), giving their room in
    the project's storage quota back: how many went."""
    return kv_history_purge(dataset=dataset, key=key)


@dataclass(frozen=True, slots=True)
class DocumentRow:
    abstract: knowledge.Abstract
    last_write: LastWrite | None
    source: list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class DocumentsPage(Page[DocumentRow]):
    total: int


def _row(project_id: UUID, abstract: knowledge.Abstract) -> DocumentRow:
    last = knowledge.knowledge_last_write(project_id=project_id, document_id=abstract.id)
    return DocumentRow(abstract, last, source_items(None if last is None else last.source))


def viewer_documents_page(
    *, project_id: UUID, cursor: str | None = None, limit: int = DOCUMENT_PAGE_SIZE
) -> DocumentsPage:
    """One index page of abstracts, each with its body's last write (not the body)."""
    page = knowledge.knowledge_list(project_id=project_id, cursor=cursor, limit=limit)
    rows = [_row(project_id, abstract) for abstract in page.documents]
    return DocumentsPage(rows, page.next_cursor, page.total)


@dataclass(frozen=True, slots=True)
class DocumentView:
    document: knowledge.Document
    last_write: LastWrite | None
    source: list[tuple[str, str]]


def viewer_document(*, project_id: UUID, document_id: str) -> DocumentView:
    document = knowledge.knowledge_get(project_id=project_id, document_id=document_id)
    last = knowledge.knowledge_last_write(project_id=project_id, document_id=document_id)
    return DocumentView(document, last, source_items(None if last is None else last.source))
