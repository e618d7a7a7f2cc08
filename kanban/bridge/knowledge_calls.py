"""The seven Knowledge ops of the bridge: a frame's ``key`` and ``value`` become the
arguments of one ``kanban.data.knowledge.knowledge_action``, for the page's project or,
with an alias, for the related project under its knowledge grant.

The shapes are the SDK's (bridge_js/README.md, "Knowledge"): the document id travels in
``key`` (a search names its one document as ``documentId``); everything else in ``value``,
an object holding only the op's fields (``check_frame`` allowed no others).
"""

from __future__ import annotations

from typing import Any, Final
from uuid import UUID

from kanban.bridge.frames import Request
from kanban.data.knowledge import knowledge_action
from kanban.data.kv import Provenance

#: Wire op -> the action's name.
_ACTIONS: Final = {
    "knowledge.list": "list",
    "knowledge.get": "get",
    "knowledge.create": "create",
    "knowledge.edit": "edit",
    "knowledge.delete": "delete",
    "knowledge.search": "search",
    "knowledge.readLines": "read_lines",
}


def knowledge_call(*, user: Any, consumer_id: UUID, page: str, request: Request) -> Any:
    arguments = request.value or {}
    document_id = arguments.get("documentId") if request.op == "knowledge.search" else request.key
    return knowledge_action(
        action=_ACTIONS[request.op],
        user=user,
        project_id=consumer_id,
        alias=request.alias,
        document_id=document_id,
        arguments=arguments,
        provenance=Provenance(via="bridge", page=page),
    )
