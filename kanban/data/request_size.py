"""The largest request this server accepts, from the configured value and document limits
(``KANBAN_MAX_VALUE_BYTES``, ``KANBAN_MAX_DOCUMENT_BYTES``; ``storage.limits`` does the
arithmetic). Both transports bound a request with it: the HTTP body limit
(``kanban.web.bodylimit``), the bridge's frame check and daphne's websocket limit.
"""

from __future__ import annotations

from django.conf import settings

from storage import limits


def max_request_bytes() -> int:
    return limits.request_bytes(
        value_bytes=int(settings.KANBAN_MAX_VALUE_BYTES),
        document_bytes=int(settings.KANBAN_MAX_DOCUMENT_BYTES),
    )
