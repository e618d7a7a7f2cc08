"""A JSON parser that enforces the body size before reading it all and refuses NaN."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.parsers import BaseParser

from storage import jsoncodec, limits
from storage.errors import ErrorCode, KanbanError


def max_body_bytes() -> int:
    return limits.value_json_bytes(int(settings.KANBAN_MAX_VALUE_BYTES))


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def max_bytes(self) -> int:
        return max_body_bytes()

    def parse(
        self,
        stream: IO[Any] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        if stream is None:
            return None
        limit = self.max_bytes()
        # Read one byte past the limit so a body without Content-Length is bounded too.
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise KanbanError(ErrorCode.TOO_LARGE, f"request body is larger than {limit} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise KanbanError(ErrorCode.INVALID_ARGUMENT, "request body is not UTF-8") from None
        return jsoncodec.decode(text)
