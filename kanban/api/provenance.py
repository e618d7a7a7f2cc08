"""What a REST write records of where it came from: the API, the token's prefix, and the run
and conversation an agent names in two headers."""

from __future__ import annotations

from typing import Final

from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request

from kanban.api.schema import text
from kanban.data.kv import MAX_RUN_ID_LENGTH, Provenance, check_run_id
from kanban.models import ApiToken

RUN_HEADER: Final = "X-Run-Id"
CONVERSATION_HEADER: Final = "X-Conversation-Id"

#: Documents the headers on every endpoint that writes.
WRITE_HEADERS: Final = [
    OpenApiParameter(
        RUN_HEADER,
        text(max_length=MAX_RUN_ID_LENGTH),
        OpenApiParameter.HEADER,
        description="the agent run this write belongs to; kept in the value's write source",
    ),
    OpenApiParameter(
        CONVERSATION_HEADER,
        text(max_length=MAX_RUN_ID_LENGTH),
        OpenApiParameter.HEADER,
        description="the conversation this write belongs to; kept in its write source",
    ),
]


def rest_provenance(request: Request) -> Provenance:
    token = request.auth if isinstance(request.auth, ApiToken) else None
    return Provenance(
        via="api",
        run_id=check_run_id(request.headers.get(RUN_HEADER), field=RUN_HEADER),
        conversation_id=check_run_id(
            request.headers.get(CONVERSATION_HEADER), field=CONVERSATION_HEADER
        ),
        token=None if token is None else token.prefix,
    )
