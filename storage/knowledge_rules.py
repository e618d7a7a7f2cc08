"""What the Knowledge base accepts: titles, markdown, counts and searches within their
limits, checked before anything is read or written."""

from __future__ import annotations

from typing import Final

from django.conf import settings

from storage import jsoncodec, limits
from storage.errors import ErrorCode, KanbanError, invalid_argument

MAX_TITLE_LENGTH: Final = limits.MAX_TITLE_CHARS
MAX_QUERY_LENGTH: Final = 1024
DEFAULT_SEARCH_LIMIT: Final = 100
MAX_SEARCH_LIMIT: Final = 1000
MAX_CONTEXT_LINES: Final = 100


def check_title(title: object) -> str:
    if not isinstance(title, str) or not title.strip():
        raise invalid_argument("title must be a non-empty string", field="title")
    if len(title) > MAX_TITLE_LENGTH:
        raise invalid_argument(f"title is longer than {MAX_TITLE_LENGTH} characters", field="title")
    jsoncodec.check_json(title)
    return title


def max_document_bytes() -> int:
    return int(settings.KANBAN_MAX_DOCUMENT_BYTES)


def max_body_bytes() -> int:
    """The stored body's bound. The markdown limit is checked exactly by ``check_markdown``;
    this one only must not refuse a document at that limit instead."""
    return limits.document_json_bytes(max_document_bytes())


def check_markdown(markdown: object) -> tuple[str, int]:
    """The markdown and its size in UTF-8 bytes, or ``invalid_argument`` / ``too_large``."""
    if not isinstance(markdown, str):
        raise invalid_argument("markdown must be a string", field="markdown")
    try:
        size = len(markdown.encode("utf-8"))
    except UnicodeEncodeError:
        raise invalid_argument(
            "markdown contains an unpaired surrogate", field="markdown"
        ) from None
    limit = max_document_bytes()
    if size > limit:
        raise KanbanError(
            ErrorCode.TOO_LARGE,
            f"markdown is {size} bytes; a document is at most {limit} bytes",
            field="markdown",
            limit=limit,
        )
    return markdown, size


def check_count(value: object, name: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise invalid_argument(f"{name} must be an integer from {low} to {high}", field=name)
    return value


def split_lines(markdown: str) -> list[str]:
    """Lines end at ``\\n`` (a ``\\r`` before it is dropped); a final newline ends the last
    line rather than starting an empty one, so ``"a\\nb\\n"`` has two lines."""
    if not markdown:
        return []
    lines = markdown.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
