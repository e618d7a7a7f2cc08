"""The attachment ops of the bridge: a card's list and a delete, for the page's project or,
with an alias, for the related project under its grants (as ``get`` / ``set`` of the card's
``attachments:<card>`` key decide). The card travels in ``key``, a deleted attachment's id
in ``value``. An upload never comes this way: its bytes go from the board page's host to
the REST upload, which takes the alias too (``kanban/api/attachments.py``).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from kanban.bridge.frames import Request
from kanban.data import attachments
from kanban.data.kv import Provenance
from storage.errors import invalid_argument


def attachment_call(*, user: Any, consumer_id: UUID, page: str, request: Request) -> Any:
    card = request.key or ""
    if request.op == "attachments.list":
        return attachments.attachment_list(
            user=user, project_id=consumer_id, card=card, alias=request.alias
        )
    attachment_id = (request.value or {}).get("id")
    if not isinstance(attachment_id, str) or not attachment_id:
        raise invalid_argument("name the attachment: value {id}", field="id")
    attachments.attachment_delete(
        user=user,
        project_id=consumer_id,
        card=card,
        attachment_id=attachment_id,
        alias=request.alias,
        provenance=Provenance(via="bridge", page=page),
    )
    return {}
