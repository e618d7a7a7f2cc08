"""The one vocabulary of error codes, shared by every layer and transport.

HTTP renders these in ``kanban.api.errors``; the websocket consumer renders them in
``kanban.bridge.frames``; the JS SDK (``bridge_js/src/errors.js``) uses the same strings.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    INVALID_ARGUMENT = "invalid_argument"
    UNAUTHENTICATED = "unauthenticated"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    UNKNOWN_ALIAS = "unknown_alias"
    RELATIONSHIP_PENDING = "relationship_pending"
    CONFLICT = "conflict"
    TOO_LARGE = "too_large"
    #: A write would take its project past its storage quota (values, kept versions and
    #: documents together); nothing was written.
    QUOTA_EXCEEDED = "quota_exceeded"
    #: A person is at a count limit (the boards one may own): the request itself is fine,
    #: and goes through once they have fewer; nothing was written.
    LIMIT_REACHED = "limit_reached"
    #: The thing named is built in and stays as it is (a board's default configuration
    #: cannot be renamed or deleted): the request is well formed; nothing was written.
    BUILT_IN = "built_in"
    RATE_LIMITED = "rate_limited"
    UNAVAILABLE = "unavailable"
    #: Never possible on this server, whoever asks (running a project's entrypoint).
    NOT_SUPPORTED = "not_supported"


class KanbanError(Exception):
    """Every expected failure: a stable code, a human message and optional details."""

    def __init__(self, code: ErrorCode, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        return {"code": str(self.code), "message": self.message, **self.details}

    def __repr__(self) -> str:
        return f"KanbanError({self.code!s}, {self.message!r})"


def invalid_argument(message: str, **details: Any) -> KanbanError:
    return KanbanError(ErrorCode.INVALID_ARGUMENT, message, **details)


class Conflict(KanbanError):
    """A compare-and-set found another revision; nothing was written."""

    def __init__(self, message: str, *, current_seq: int | None) -> None:
        super().__init__(ErrorCode.CONFLICT, message)
        self.current_seq = current_seq
