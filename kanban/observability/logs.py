"""JSON logs (``KANBAN_LOG_FORMAT=json``): one object per line, each with the id of the
request or socket it happened in, so an operator can follow one socket through three
workers' logs.

The id lives in a context variable: the HTTP middleware and the bridge consumer set it for
what runs on their behalf (asyncio copies it into each task and ``sync_to_async`` thread).
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Final

CONTEXT: Final[ContextVar[str | None]] = ContextVar("kanban_log_context", default=None)


def new_context_id(kind: str) -> str:
    """A fresh ``request-…`` or ``socket-…`` id, set for what runs from here on."""
    context_id = f"{kind}-{uuid.uuid4().hex[:12]}"
    CONTEXT.set(context_id)
    return context_id


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "context": CONTEXT.get(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


class RequestContextMiddleware:
    """Gives every HTTP request its log context id (and answers with it, X-Request-Id)."""

    def __init__(self, get_response: Callable[[Any], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        context_id = new_context_id("request")
        response = self.get_response(request)
        response["X-Request-Id"] = context_id
        return response
