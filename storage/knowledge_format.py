"""The stored v2 format of the project Knowledge base (seed 000, "Project Knowledge Base").

Every record lives in the project's PersistentValue dataset, under keys built only here:

- ``knowledge.documents``: the index metadata
  ``{version: 2, total, sequence, firstPageId, lastPageId}``. ``sequence`` only increases and
  names new pages and generated document ids; ``lastPageId`` (beyond the seed's list) lets a
  create find the page with room without walking the chain.
- ``knowledge.documents.page.<pageId>``: ``{id, prev, next, documents}`` with at most 128
  abstracts ``{id, title, markdownPreview, size, updatedAt}`` in creation order. Pages form
  a doubly linked chain from ``firstPageId``. An emptied page is unlinked and left as
  ``{id, removed: true, next}`` so a cursor still naming it can move on.
- ``knowledge.documents.locator.<id>``: ``{id, pageId}``, the page holding the document;
  a tombstone ``{id, pageId: null, deleted: true, deletedAt}`` after delete.
- ``knowledge.document.<id>``: the body ``{id, title, markdown, createdAt, updatedAt}``;
  a tombstone ``{id, deleted: true, deletedAt}`` after delete.

No v1 single-array index is read or migrated: anything but version 2 is refused.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from storage.errors import ErrorCode, KanbanError, invalid_argument

FORMAT_VERSION: Final = 2
PAGE_CAPACITY: Final = 128
#: ``markdownPreview`` reads no further than this into a body, however long it is.
PREVIEW_SCAN_CHARS: Final = 16 * 1024
PREVIEW_LENGTH: Final = 240

#: Every key of the format starts with this; raw PersistentValue writes may not.
RESERVED_PREFIX: Final = "knowledge."
INDEX_KEY: Final = "knowledge.documents"
_PAGE_PREFIX: Final = "knowledge.documents.page."
_LOCATOR_PREFIX: Final = "knowledge.documents.locator."
_DOCUMENT_PREFIX: Final = "knowledge.document."

DOCUMENT_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_PAGE_ID_RE: Final = re.compile(r"p[1-9][0-9]{0,18}")
_CURSOR_VERSION: Final = 1
CURSOR_RE: Final = re.compile(r"[A-Za-z0-9_-]{1,512}")


# --- keys --------------------------------------------------------------------------------


def check_document_id(document_id: object) -> str:
    if not isinstance(document_id, str) or not DOCUMENT_ID_RE.fullmatch(document_id):
        raise invalid_argument(
            "a document id is 1 to 128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit",
            field="documentId",
        )
    return document_id


def document_key(document_id: str) -> str:
    """``knowledge.document.<id>``: where a document's body is stored."""
    return _DOCUMENT_PREFIX + check_document_id(document_id)


def document_id_of(key: str) -> str:
    """The document id in a body key (the inverse of ``document_key``)."""
    return key.removeprefix(_DOCUMENT_PREFIX)


def is_document_key(key: str) -> bool:
    """Whether ``key`` is a document body's key (one per document write, unlike the index
    records every write touches)."""
    return key.startswith(_DOCUMENT_PREFIX)


def locator_key(document_id: str) -> str:
    return _LOCATOR_PREFIX + check_document_id(document_id)


def page_key(page_id: str) -> str:
    if not _PAGE_ID_RE.fullmatch(page_id):
        raise invalid_argument(f"{page_id!r} is not a knowledge page id")
    return _PAGE_PREFIX + page_id


def page_id_for(sequence: int) -> str:
    return f"p{sequence}"


def generated_document_id(sequence: int) -> str:
    return f"doc-{sequence}"


# --- values ------------------------------------------------------------------------------


def now() -> datetime:
    # Stored at millisecond precision, so round here too: what a write returns equals what a
    # later read parses.
    moment = datetime.now(UTC)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def timestamp(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_timestamp(text: object) -> datetime:
    if not isinstance(text, str):
        raise damaged("a timestamp is not a string")
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise damaged(f"{text!r} is not a timestamp") from None


def markdown_preview(markdown: str) -> str:
    """The start of a body with whitespace collapsed, from its first 16K characters only.

    A multi-megabyte body is neither copied nor scanned for it: the slice is the bound.
    """
    text = " ".join(markdown[:PREVIEW_SCAN_CHARS].split())
    if len(text) > PREVIEW_LENGTH:
        return text[: PREVIEW_LENGTH - 1].rstrip() + "…"
    return text


def damaged(problem: str) -> KanbanError:
    return KanbanError(
        ErrorCode.UNAVAILABLE,
        f"the knowledge base index is damaged ({problem}); nothing was changed",
    )


def not_version_2() -> KanbanError:
    return KanbanError(
        ErrorCode.UNAVAILABLE,
        f"{INDEX_KEY} is not a version {FORMAT_VERSION} index; older indexes are not read "
        "or migrated",
        key=INDEX_KEY,
    )


# --- records -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Meta:
    total: int = 0
    sequence: int = 0
    first_page_id: str | None = None
    last_page_id: str | None = None

    def to_value(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "total": self.total,
            "sequence": self.sequence,
            "firstPageId": self.first_page_id,
            "lastPageId": self.last_page_id,
        }

    @classmethod
    def from_value(cls, value: Any) -> Meta:
        if not isinstance(value, dict) or value.get("version") != FORMAT_VERSION:
            raise not_version_2()
        total, sequence = value.get("total"), value.get("sequence")
        first, last = value.get("firstPageId"), value.get("lastPageId")
        if type(total) is not int or type(sequence) is not int or total < 0 or sequence < 0:
            raise damaged("total and sequence must be non-negative integers")
        if not _optional_page_id(first) or not _optional_page_id(last):
            raise damaged("firstPageId and lastPageId must be page ids or null")
        return cls(total, sequence, first, last)


def _optional_page_id(value: object) -> bool:
    return value is None or (isinstance(value, str) and bool(_PAGE_ID_RE.fullmatch(value)))


@dataclass(frozen=True, slots=True)
class Page:
    """A page block; ``documents`` holds stored abstracts as they are (plain dicts)."""

    id: str
    prev: str | None = None
    next: str | None = None
    documents: tuple[dict[str, Any], ...] = field(default=())
    removed: bool = False

    def to_value(self) -> dict[str, Any]:
        if self.removed:
            return {"id": self.id, "removed": True, "next": self.next}
        return {
            "id": self.id,
            "prev": self.prev,
            "next": self.next,
            "documents": list(self.documents),
        }

    def position_of(self, document_id: str) -> int | None:
        for index, abstract in enumerate(self.documents):
            if abstract.get("id") == document_id:
                return index
        return None

    @classmethod
    def from_value(cls, page_id: str, value: Any) -> Page:
        if not isinstance(value, dict) or value.get("id") != page_id:
            raise damaged(f"page {page_id} does not name itself")
        nxt = value.get("next")
        if not _optional_page_id(nxt):
            raise damaged(f"page {page_id} links to a bad page id")
        if value.get("removed") is True:
            return cls(page_id, next=nxt, removed=True)
        prev, documents = value.get("prev"), value.get("documents")
        if not _optional_page_id(prev):
            raise damaged(f"page {page_id} links to a bad page id")
        if (
            not isinstance(documents, list)
            or len(documents) > PAGE_CAPACITY
            or not all(isinstance(item, dict) for item in documents)
        ):
            raise damaged(f"page {page_id} must hold at most {PAGE_CAPACITY} abstracts")
        return cls(page_id, prev, nxt, tuple(documents))


@dataclass(frozen=True, slots=True)
class Abstract:
    """A document's entry in an index page. What a page stores and what a listing answers
    are the same record, ``{id, title, markdownPreview, size, updatedAt}``: both ways of it
    are here."""

    id: str
    title: str
    markdown_preview: str
    size: int
    updated_at: datetime

    @classmethod
    def from_value(cls, value: Any) -> Abstract:
        try:
            return cls(
                id=value["id"],
                title=value["title"],
                markdown_preview=value["markdownPreview"],
                size=value["size"],
                updated_at=parse_timestamp(value["updatedAt"]),
            )
        except KeyError as missing:
            raise damaged(f"an abstract lacks {missing}") from None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "markdownPreview": self.markdown_preview,
            "size": self.size,
            "updatedAt": timestamp(self.updated_at),
        }


def body_value(
    document_id: str, title: str, markdown: str, created_at: datetime, updated_at: datetime
) -> dict[str, Any]:
    return {
        "id": document_id,
        "title": title,
        "markdown": markdown,
        "createdAt": timestamp(created_at),
        "updatedAt": timestamp(updated_at),
    }


def locator_value(document_id: str, page_id: str) -> dict[str, Any]:
    return {"id": document_id, "pageId": page_id}


def locator_tombstone(document_id: str, when: datetime) -> dict[str, Any]:
    return {"id": document_id, "pageId": None, "deleted": True, "deletedAt": timestamp(when)}


def body_tombstone(document_id: str, when: datetime) -> dict[str, Any]:
    return {"id": document_id, "deleted": True, "deletedAt": timestamp(when)}


def is_live_body(value: Any) -> bool:
    return isinstance(value, dict) and value.get("deleted") is not True


def check_body(document_id: str, value: Any) -> dict[str, Any]:
    if (
        not isinstance(value, dict)
        or value.get("id") != document_id
        or not isinstance(value.get("title"), str)
        or not isinstance(value.get("markdown"), str)
    ):
        raise damaged(f"the body of {document_id!r} is malformed")
    return value


def page_id_of_locator(document_id: str, value: Any) -> str:
    if not isinstance(value, dict) or value.get("id") != document_id:
        raise damaged(f"the locator of {document_id!r} is malformed")
    page_id = value.get("pageId")
    if not isinstance(page_id, str) or not _PAGE_ID_RE.fullmatch(page_id):
        raise damaged(f"the locator of {document_id!r} names no page")
    return page_id


# --- the list cursor ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Position:
    """Where a listing resumes: ``offset`` into page ``page_id``, just after ``anchor``.

    The anchor (the last document returned) keeps the position right when documents before
    it on the same page were deleted between two calls.
    """

    page_id: str
    offset: int = 0
    anchor: str | None = None

    def resume_index(self, page: Page) -> int:
        documents = page.documents
        if self.anchor is None:
            return min(self.offset, len(documents))
        if 0 < self.offset <= len(documents) and documents[self.offset - 1].get("id") == (
            self.anchor
        ):
            return self.offset
        found = page.position_of(self.anchor)
        if found is not None:
            return found + 1
        # The anchor itself was deleted since: what followed it moved up by one.
        return min(max(self.offset - 1, 0), len(documents))


def encode_cursor(position: Position) -> str:
    data = {"v": _CURSOR_VERSION, "p": position.page_id, "o": position.offset}
    if position.anchor is not None:
        data["a"] = position.anchor
    raw = json.dumps(data, separators=(",", ":")).encode("ascii")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_cursor(cursor: object) -> Position:
    """Parse a cursor this server issued, or refuse it with ``invalid_argument``."""
    refused = invalid_argument(
        "cursor is not one this server issued; pass nextCursor back exactly as received",
        field="cursor",
    )
    if not isinstance(cursor, str) or not CURSOR_RE.fullmatch(cursor):
        raise refused
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error):
        raise refused from None
    if not isinstance(data, dict) or set(data) - {"v", "p", "o", "a"}:
        raise refused
    version, page_id, offset, anchor = data.get("v"), data.get("p"), data.get("o"), data.get("a")
    if (
        type(version) is not int
        or version != _CURSOR_VERSION
        or not isinstance(page_id, str)
        or not _PAGE_ID_RE.fullmatch(page_id)
        or type(offset) is not int
        or not 0 <= offset <= PAGE_CAPACITY
        or not (anchor is None or (isinstance(anchor, str) and DOCUMENT_ID_RE.fullmatch(anchor)))
    ):
        raise refused
    return Position(page_id, offset, anchor)
