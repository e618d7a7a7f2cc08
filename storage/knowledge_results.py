"""What the Knowledge base's storage service answers: a page of documents, a document, a
write's summary, search hits and a range of lines. Plain frozen values, each rendered
to JSON by ``as_dict`` the same way for every transport."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from storage.knowledge_format import Abstract, body_value, timestamp


@dataclass(frozen=True, slots=True)
class DocumentPage:
    documents: tuple[Abstract, ...]
    total: int
    #: Opaque; pass back as is for the next page. None after the last page.
    next_cursor: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "documents": [item.as_dict() for item in self.documents],
            "total": self.total,
            "nextCursor": self.next_cursor,
        }


@dataclass(frozen=True, slots=True)
class Document:
    id: str
    title: str
    markdown: str
    created_at: datetime
    updated_at: datetime
    #: The body's revision; ``knowledge_edit(expected_revision=...)`` compares against it.
    revision: str

    def as_dict(self) -> dict[str, Any]:
        return {
            **body_value(self.id, self.title, self.markdown, self.created_at, self.updated_at),
            "revision": self.revision,
        }


@dataclass(frozen=True, slots=True)
class DocumentSummary:
    """What a write returns: the abstract, plus creation time and the new revision."""

    abstract: Abstract
    created_at: datetime
    revision: str

    @property
    def id(self) -> str:
        return self.abstract.id

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.abstract.as_dict(),
            "createdAt": timestamp(self.created_at),
            "revision": self.revision,
        }


def _fields_as_dict(result: Any) -> dict[str, Any]:
    """The answer of a result that is its fields as they are: each under its camelCase
    name, in declaration order, a tuple as a list. One rule for them all, so a field added
    to such a result reaches the bridge and REST without a second list to keep in step."""
    answer: dict[str, Any] = {}
    for field in fields(result):
        head, *rest = field.name.split("_")
        value = getattr(result, field.name)
        answer[head + "".join(word.title() for word in rest)] = (
            list(value) if isinstance(value, tuple) else value
        )
    return answer


@dataclass(frozen=True, slots=True)
class SearchHit:
    document_id: str
    title: str
    line_number: int  # 1-based
    line: str
    before: tuple[str, ...]  # the lines just above, in order
    after: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return _fields_as_dict(self)


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: tuple[SearchHit, ...]
    #: True when more lines matched than ``limit``; the search stopped there.
    truncated: bool

    def as_dict(self) -> dict[str, Any]:
        return {"results": [hit.as_dict() for hit in self.hits], "truncated": self.truncated}


@dataclass(frozen=True, slots=True)
class DocumentLines:
    document_id: str
    start_line: int
    end_line: int
    total_lines: int
    lines: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return _fields_as_dict(self)
