"""The project Knowledge base: Markdown documents in a project's PersistentValue.

The stored format and its keys are in ``storage.knowledge_format``. Reads follow the index
(metadata, then the page they need) and never touch a body unless the body is the answer.
Create, edit and delete hold the project's knowledge lock and commit index, locator, body
and tombstones together in one ``engine.commit``, so a failure leaves nothing half-written
and concurrent writers of one project queue instead of overwriting each other's index.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Final
from uuid import UUID

from django.conf import settings
from django.db import transaction

from storage import engine
from storage.errors import Conflict, ErrorCode, KanbanError, invalid_argument
from storage.knowledge_format import (
    INDEX_KEY,
    PAGE_CAPACITY,
    Abstract,
    Meta,
    Page,
    Position,
    body_tombstone,
    body_value,
    check_body,
    check_document_id,
    damaged,
    decode_cursor,
    document_key,
    encode_cursor,
    generated_document_id,
    is_live_body,
    locator_key,
    locator_tombstone,
    locator_value,
    markdown_preview,
    now,
    page_id_for,
    page_id_of_locator,
    page_key,
    parse_timestamp,
)
from storage.knowledge_results import (
    Document,
    DocumentLines,
    DocumentPage,
    DocumentSummary,
    SearchHit,
    SearchResult,
)
from storage.knowledge_rules import (
    DEFAULT_SEARCH_LIMIT,
    MAX_CONTEXT_LINES,
    MAX_QUERY_LENGTH,
    MAX_SEARCH_LIMIT,
    check_count,
    check_markdown,
    check_title,
    max_body_bytes,
    split_lines,
)
from storage.kv import Dataset, parse_revision, revision_of
from storage.writes import ANY, ExpectedSeq, SetValue, Write, set_value

__all__ = [
    "INDEX_KEY",
    "Abstract",
    "Document",
    "DocumentLines",
    "DocumentPage",
    "DocumentSummary",
    "SearchHit",
    "SearchResult",
    "document_key",
    "knowledge_create",
    "knowledge_delete",
    "knowledge_edit",
    "knowledge_get",
    "knowledge_last_write",
    "knowledge_list",
    "knowledge_read_lines",
    "knowledge_search",
]

#: Generated ids skip ids a caller chose; give up rather than loop on a damaged sequence.
_MAX_ID_PROBES: Final = 1000


# --- reading the stored records ----------------------------------------------------------


def _dataset(project_id: UUID) -> Dataset:
    return Dataset(project_id, "persistentValue")


def _get(project_id: UUID, key: str, using: str) -> engine.StoredValue | None:
    return engine.get_value(_dataset(project_id).address(key), using=using)


def _read_meta(project_id: UUID, using: str) -> tuple[Meta, int | None]:
    """The index metadata and its seq (None when the knowledge base was never written)."""
    stored = _get(project_id, INDEX_KEY, using)
    if stored is None:
        return Meta(), None
    return Meta.from_value(stored.value), stored.seq


def _read_page(project_id: UUID, page_id: str, using: str) -> tuple[Page, int] | None:
    stored = _get(project_id, page_key(page_id), using)
    if stored is None:
        return None
    return Page.from_value(page_id, stored.value), stored.seq


def _need_page(project_id: UUID, page_id: str, using: str) -> tuple[Page, int]:
    found = _read_page(project_id, page_id, using)
    if found is None or found[0].removed:
        raise damaged(f"page {page_id} is linked but missing")
    return found


def _live_body(project_id: UUID, document_id: str, using: str) -> engine.StoredValue | None:
    stored = _get(project_id, document_key(document_id), using)
    if stored is None or not is_live_body(stored.value):
        return None
    check_body(document_id, stored.value)
    return stored


def _not_found(document_id: str) -> KanbanError:
    return KanbanError(
        ErrorCode.NOT_FOUND, f"no knowledge document {document_id!r}", documentId=document_id
    )


def _document(stored: engine.StoredValue) -> Document:
    body = stored.value
    return Document(
        id=body["id"],
        title=body["title"],
        markdown=body["markdown"],
        created_at=parse_timestamp(body["createdAt"]),
        updated_at=parse_timestamp(body["updatedAt"]),
        revision=revision_of(stored.seq),
    )


# --- writing -----------------------------------------------------------------------------


@contextmanager
def _serialized(project_id: UUID, using: str) -> Iterator[None]:
    """One knowledge writer per project at a time, until the transaction ends."""
    with transaction.atomic(using=using):
        engine.lock_namespace(_dataset(project_id).namespace, using=using)
        yield


class _Writes:
    """The writes of one create, edit or delete, all carrying the caller's write source."""

    def __init__(self, project_id: UUID, source: Mapping[str, Any]) -> None:
        self.dataset = _dataset(project_id)
        self.source = dict(source)
        self.writes: list[Write] = []

    def set(
        self, key: str, value: Any, expected_seq: ExpectedSeq = ANY, max_bytes: int | None = None
    ) -> SetValue:
        write = set_value(
            self.dataset.address(key),
            value,
            expected_seq=expected_seq,
            source=self.source,
            max_bytes=int(settings.KANBAN_MAX_VALUE_BYTES) if max_bytes is None else max_bytes,
        )
        self.writes.append(write)
        return write

    def page(self, page: Page, expected_seq: ExpectedSeq) -> None:
        self.set(page_key(page.id), page.to_value(), expected_seq)

    def commit(self, using: str, revision_of_write: SetValue) -> str:
        results = engine.commit(
            self.writes, using=using, max_project_bytes=int(settings.KANBAN_PROJECT_BYTES)
        )
        seq = results[self.writes.index(revision_of_write)].seq
        assert seq is not None
        return revision_of(seq)


def knowledge_create(
    *,
    project_id: UUID,
    title: str,
    markdown: str,
    source: Mapping[str, Any],
    document_id: str | None = None,
    using: str = "default",
) -> DocumentSummary:
    """Add a document at the end of the index; ``document_id`` picks a stable id (a
    ``conflict`` when a live document has it), otherwise one is generated."""
    title = check_title(title)
    markdown, size = check_markdown(markdown)
    if document_id is not None:
        check_document_id(document_id)
    preview = markdown_preview(markdown)
    when = now()
    writes = _Writes(project_id, source)
    with _serialized(project_id, using):
        meta, meta_seq = _read_meta(project_id, using)
        sequence = meta.sequence
        if document_id is None:
            sequence, document_id, body_seq = _free_generated_id(project_id, meta, using)
        else:
            existing = _get(project_id, document_key(document_id), using)
            if existing is not None and is_live_body(existing.value):
                raise KanbanError(
                    ErrorCode.CONFLICT,
                    f"knowledge document {document_id!r} already exists",
                    documentId=document_id,
                )
            body_seq = None if existing is None else existing.seq
        abstract = Abstract(document_id, title, preview, size, when)
        last = (
            None if meta.last_page_id is None else _need_page(project_id, meta.last_page_id, using)
        )
        if last is not None and len(last[0].documents) < PAGE_CAPACITY:
            page_id = last[0].id
            documents = (*last[0].documents, abstract.as_dict())
            writes.page(replace(last[0], documents=documents), last[1])
        else:
            sequence += 1
            page_id = page_id_for(sequence)
            if last is not None:
                writes.page(replace(last[0], next=page_id), last[1])
            prev = None if last is None else last[0].id
            writes.page(Page(page_id, prev=prev, documents=(abstract.as_dict(),)), None)
        new_meta = Meta(
            total=meta.total + 1,
            sequence=sequence,
            first_page_id=meta.first_page_id or page_id,
            last_page_id=page_id,
        )
        writes.set(INDEX_KEY, new_meta.to_value(), meta_seq)
        writes.set(locator_key(document_id), locator_value(document_id, page_id))
        body = writes.set(
            document_key(document_id),
            body_value(document_id, title, markdown, when, when),
            body_seq,
            max_bytes=max_body_bytes(),
        )
        revision = writes.commit(using, body)
    return DocumentSummary(abstract, when, revision)


def _free_generated_id(project_id: UUID, meta: Meta, using: str) -> tuple[int, str, int | None]:
    """The next sequence number whose ``doc-<n>`` id no live document holds, that id, and
    the seq of what its body key holds now (a tombstone's, or None)."""
    sequence = meta.sequence
    for _ in range(_MAX_ID_PROBES):
        sequence += 1
        candidate = generated_document_id(sequence)
        stored = _get(project_id, document_key(candidate), using)
        if stored is None or not is_live_body(stored.value):
            return sequence, candidate, None if stored is None else stored.seq
    raise damaged(f"no free document id after sequence {meta.sequence}")


def knowledge_edit(
    *,
    project_id: UUID,
    document_id: str,
    source: Mapping[str, Any],
    title: str | None = None,
    markdown: str | None = None,
    expected_revision: str | object = ANY,
    using: str = "default",
) -> DocumentSummary:
    """Replace the title and/or the markdown; with ``expected_revision``, only if the body is
    still at that revision (``conflict`` otherwise, nothing written)."""
    check_document_id(document_id)
    if title is None and markdown is None:
        raise invalid_argument("an edit needs a title, markdown or both")
    new_title = None if title is None else check_title(title)
    checked = None if markdown is None else check_markdown(markdown)
    expected = ANY if expected_revision is ANY else parse_revision(expected_revision)
    when = now()
    writes = _Writes(project_id, source)
    with _serialized(project_id, using):
        _read_meta(project_id, using)  # refuses a knowledge base that is not version 2
        stored = _live_body(project_id, document_id, using)
        if stored is None:
            raise _not_found(document_id)
        if expected is not ANY and expected != stored.seq:
            raise Conflict(
                f"knowledge document {document_id!r} is not at revision "
                f"{expected_revision}; nothing was written",
                current_seq=stored.seq,
            )
        old = stored.value
        title_now = old["title"] if new_title is None else new_title
        markdown_now, size = (old["markdown"], None) if checked is None else checked
        if size is None:
            size = len(markdown_now.encode("utf-8"))
        page, page_seq = _page_holding(project_id, document_id, using)
        index = page.position_of(document_id)
        assert index is not None
        abstract = Abstract(document_id, title_now, markdown_preview(markdown_now), size, when)
        documents = (*page.documents[:index], abstract.as_dict(), *page.documents[index + 1 :])
        writes.page(replace(page, documents=documents), page_seq)
        created_at = parse_timestamp(old["createdAt"])
        body = writes.set(
            document_key(document_id),
            body_value(document_id, title_now, markdown_now, created_at, when),
            stored.seq,
            max_bytes=max_body_bytes(),
        )
        revision = writes.commit(using, body)
    return DocumentSummary(abstract, created_at, revision)


def _page_holding(project_id: UUID, document_id: str, using: str) -> tuple[Page, int]:
    locator = _get(project_id, locator_key(document_id), using)
    if locator is None:
        raise damaged(f"document {document_id!r} has no locator")
    page, seq = _need_page(project_id, page_id_of_locator(document_id, locator.value), using)
    if page.position_of(document_id) is None:
        raise damaged(f"page {page.id} does not list document {document_id!r}")
    return page, seq


def knowledge_delete(
    *, project_id: UUID, document_id: str, source: Mapping[str, Any], using: str = "default"
) -> bool:
    """Remove a document, leaving tombstones for its locator and body.

    True when a document was removed; an absent one is not an error. An emptied page is
    unlinked from the chain.
    """
    check_document_id(document_id)
    when = now()
    writes = _Writes(project_id, source)
    with _serialized(project_id, using):
        meta, meta_seq = _read_meta(project_id, using)
        stored = _live_body(project_id, document_id, using)
        if stored is None:
            return False
        page, page_seq = _page_holding(project_id, document_id, using)
        remaining = tuple(item for item in page.documents if item.get("id") != document_id)
        if remaining:
            writes.page(replace(page, documents=remaining), page_seq)
        else:
            meta = _unlink(project_id, meta, page, page_seq, writes, using)
        meta = replace(meta, total=max(meta.total - 1, 0))
        writes.set(INDEX_KEY, meta.to_value(), meta_seq)
        writes.set(locator_key(document_id), locator_tombstone(document_id, when))
        body = writes.set(document_key(document_id), body_tombstone(document_id, when), stored.seq)
        writes.commit(using, body)
    return True


def _unlink(
    project_id: UUID, meta: Meta, page: Page, page_seq: int, writes: _Writes, using: str
) -> Meta:
    if page.prev is not None:
        prev, prev_seq = _need_page(project_id, page.prev, using)
        writes.page(replace(prev, next=page.next), prev_seq)
    if page.next is not None:
        nxt, next_seq = _need_page(project_id, page.next, using)
        writes.page(replace(nxt, prev=page.prev), next_seq)
    # Kept as a marker with its forward link, for cursors that still name this page.
    writes.page(Page(page.id, next=page.next, removed=True), page_seq)
    return replace(
        meta,
        first_page_id=page.next if meta.first_page_id == page.id else meta.first_page_id,
        last_page_id=page.prev if meta.last_page_id == page.id else meta.last_page_id,
    )


# --- reading -----------------------------------------------------------------------------


def knowledge_list(
    *,
    project_id: UUID,
    cursor: str | None = None,
    limit: int = PAGE_CAPACITY,
    using: str = "default",
) -> DocumentPage:
    """One slice of the index, in creation order, from a single page block.

    Reads the metadata and the page it needs (plus any emptied pages a stale cursor still
    names); never a body. ``cursor`` is a previous ``next_cursor``, passed back as is.
    """
    size = check_count(limit, "limit", 1, PAGE_CAPACITY)
    position = None if cursor is None else decode_cursor(cursor)
    meta, _ = _read_meta(project_id, using)
    if position is None:
        if meta.first_page_id is None:
            return DocumentPage((), meta.total, None)
        position = Position(meta.first_page_id)
    from_cursor = cursor is not None
    while True:
        found = _read_page(project_id, position.page_id, using)
        if found is None:
            if from_cursor:
                raise invalid_argument(
                    "cursor names no page of this knowledge base", field="cursor"
                )
            raise damaged(f"page {position.page_id} is linked but missing")
        page = found[0]
        start = 0 if page.removed else position.resume_index(page)
        if start < len(page.documents):
            break
        if page.next is None:
            return DocumentPage((), meta.total, None)
        position, from_cursor = Position(page.next), False
    chosen = page.documents[start : start + size]
    end = start + len(chosen)
    if end < len(page.documents):
        next_cursor: str | None = encode_cursor(Position(page.id, end, chosen[-1]["id"]))
    elif page.next is not None:
        next_cursor = encode_cursor(Position(page.next))
    else:
        next_cursor = None
    abstracts = tuple(Abstract.from_value(item) for item in chosen)
    return DocumentPage(abstracts, meta.total, next_cursor)


def knowledge_get(*, project_id: UUID, document_id: str, using: str = "default") -> Document:
    stored = _live_body(project_id, check_document_id(document_id), using)
    if stored is None:
        raise _not_found(document_id)
    return _document(stored)


def knowledge_search(
    *,
    project_id: UUID,
    query: str,
    document_id: str | None = None,
    before_lines: int = 0,
    after_lines: int = 0,
    limit: int = DEFAULT_SEARCH_LIMIT,
    budget_chars: int | None = None,
    using: str = "default",
) -> SearchResult:
    """Lines containing ``query`` (case-insensitive), in index order, with context lines.

    Scans bodies one at a time and stops after ``limit`` hits, reporting ``truncated``. A
    search that would read more than ``budget_chars`` of markdown (default the setting
    ``KANBAN_SEARCH_BUDGET_CHARS``) before finishing stops with ``too_large``: a linear scan
    of a big base must not hold a worker, or its memory, for as long as it likes.
    """
    budget = int(settings.KANBAN_SEARCH_BUDGET_CHARS) if budget_chars is None else budget_chars
    read = 0
    if not isinstance(query, str) or not query or len(query) > MAX_QUERY_LENGTH:
        raise invalid_argument(
            f"query must be a string of 1 to {MAX_QUERY_LENGTH} characters", field="query"
        )
    if "\n" in query or "\r" in query:
        raise invalid_argument("query matches within one line; it cannot hold a newline")
    before = check_count(before_lines, "beforeLines", 0, MAX_CONTEXT_LINES)
    after = check_count(after_lines, "afterLines", 0, MAX_CONTEXT_LINES)
    bound = check_count(limit, "limit", 1, MAX_SEARCH_LIMIT)
    needle = query.casefold()
    hits: list[SearchHit] = []
    for stored in _bodies(project_id, document_id, using):
        body = stored.value
        markdown: str = body["markdown"]
        read += len(markdown)
        if read > budget:
            raise KanbanError(
                ErrorCode.TOO_LARGE,
                f"this search read its budget of {budget} characters of documents before "
                "it finished; search one document (documentId) instead",
                budgetChars=budget,
            )
        if needle not in markdown.casefold():
            continue
        lines = split_lines(markdown)
        for index, line in enumerate(lines):
            if needle not in line.casefold():
                continue
            if len(hits) == bound:
                return SearchResult(tuple(hits), truncated=True)
            hits.append(
                SearchHit(
                    document_id=body["id"],
                    title=body["title"],
                    line_number=index + 1,
                    line=line,
                    before=tuple(lines[max(index - before, 0) : index]),
                    after=tuple(lines[index + 1 : index + 1 + after]),
                )
            )
    return SearchResult(tuple(hits), truncated=False)


def _bodies(project_id: UUID, document_id: str | None, using: str) -> Iterator[engine.StoredValue]:
    """The live bodies to search, one read at a time: one document, or all in index order."""
    if document_id is not None:
        stored = _live_body(project_id, check_document_id(document_id), using)
        if stored is None:
            raise _not_found(document_id)
        yield stored
        return
    meta, _ = _read_meta(project_id, using)
    page_id = meta.first_page_id
    while page_id is not None:
        page, _ = _need_page(project_id, page_id, using)
        for item in page.documents:
            stored = _live_body(project_id, item["id"], using)
            if stored is not None:
                yield stored
        page_id = page.next


def knowledge_read_lines(
    *,
    project_id: UUID,
    document_id: str,
    start_line: int,
    end_line: int | None = None,
    using: str = "default",
) -> DocumentLines:
    """Lines ``start_line`` to ``end_line`` (1-based, inclusive; default: to the end).

    A start outside the document is ``invalid_argument`` naming its line count; an end past
    the last line reads to the last line.
    """
    if type(start_line) is not int or start_line < 1:
        raise invalid_argument("start must be a line number from 1", field="start")
    if end_line is not None and (type(end_line) is not int or end_line < start_line):
        raise invalid_argument(f"end must be a line number from start ({start_line})", field="end")
    document = knowledge_get(project_id=project_id, document_id=document_id, using=using)
    lines = split_lines(document.markdown)
    total = len(lines)
    if start_line > total:
        raise invalid_argument(
            f"document {document_id!r} has {total} lines; line {start_line} is out of range",
            field="start",
            totalLines=total,
        )
    end = total if end_line is None else min(end_line, total)
    return DocumentLines(document_id, start_line, end, total, tuple(lines[start_line - 1 : end]))


def knowledge_last_write(
    *, project_id: UUID, document_id: str, using: str = "default"
) -> engine.LastWrite | None:
    """Who last wrote a document's body, and when (the viewer's "last write source"),
    without reading the body."""
    address = _dataset(project_id).address(document_key(document_id))
    return engine.get_last_write(address, using=using)
