"""What the staff data viewers show: one bounded page of a project's KV or PersistentValue,
and a project's Knowledge documents, each with its last write source.

Staff look at data as it is stored, outside any project's grants; the admin site decides
who is staff. Every read is bounded: a scan page, an index page, one document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

from storage import jsoncodec, knowledge
from storage.engine import LastWrite
from storage.kv import Dataset, Entry, kv_scan
from storage.namespaces import Domain

KV_PAGE_SIZE: Final = 100
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
)


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
class KvRow:
    entry: Entry
    preview: str
    source: list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class KvPage:
    rows: list[KvRow]
    #: The last key shown, when more keys follow: the next page starts after it.
    next_start_after: str | None


def viewer_kv_page(
    *,
    project_id: UUID,
    domain: Domain,
    conversation_id: str | None = None,
    prefix: str = "",
    start_after: str | None = None,
    limit: int = KV_PAGE_SIZE,
) -> KvPage:
    """One key-ascending page of keys starting with ``prefix``; one row more than shown is
    read to tell whether another page follows."""
    dataset = Dataset(project_id, domain, conversation_id)
    entries = kv_scan(dataset=dataset, prefix=prefix, start_after=start_after, limit=limit + 1)
    shown = entries[:limit]
    rows = [KvRow(entry, value_preview(entry.value), source_items(entry.source)) for entry in shown]
    more = len(entries) > limit
    return KvPage(rows, shown[-1].key if more and shown else None)


@dataclass(frozen=True, slots=True)
class DocumentRow:
    abstract: knowledge.Abstract
    last_write: LastWrite | None
    source: list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class DocumentsPage:
    rows: list[DocumentRow]
    total: int
    next_cursor: str | None


def _row(project_id: UUID, abstract: knowledge.Abstract) -> DocumentRow:
    last = knowledge.knowledge_last_write(project_id=project_id, document_id=abstract.id)
    return DocumentRow(abstract, last, source_items(None if last is None else last.source))


def viewer_documents_page(
    *, project_id: UUID, cursor: str | None = None, limit: int = DOCUMENT_PAGE_SIZE
) -> DocumentsPage:
    """One index page of abstracts, each with its body's last write (not the body)."""
    page = knowledge.knowledge_list(project_id=project_id, cursor=cursor, limit=limit)
    rows = [_row(project_id, abstract) for abstract in page.documents]
    return DocumentsPage(rows, page.total, page.next_cursor)


@dataclass(frozen=True, slots=True)
class DocumentView:
    document: knowledge.Document
    last_write: LastWrite | None
    source: list[tuple[str, str]]


def viewer_document(*, project_id: UUID, document_id: str) -> DocumentView:
    document = knowledge.knowledge_get(project_id=project_id, document_id=document_id)
    last = knowledge.knowledge_last_write(project_id=project_id, document_id=document_id)
    return DocumentView(document, last, source_items(None if last is None else last.source))
