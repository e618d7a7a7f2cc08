"""The seven Knowledge ops of the bridge: a frame's ``key`` and ``value`` become the
arguments of one ``kanban.data.knowledge`` action, for the page's project or, with an alias, for
the related project under its knowledge grant.

The shapes are the SDK's (bridge_js/README.md, "Knowledge"): the document id travels in
``key``; everything else in ``value``, an object holding only the op's fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final
from uuid import UUID

from kanban.bridge.frames import Request
from kanban.data import knowledge
from kanban.data.kv import Origin
from storage.errors import invalid_argument


def _arguments(request: Request) -> dict[str, Any]:
    """The op's ``value`` fields (``check_frame`` allowed only the op's own), absent ones
    left out. An explicit null is the same as leaving the field out, as ``undefined`` is in
    the SDK."""
    value = request.value or {}
    return {name: item for name, item in value.items() if item is not None}


def _required(arguments: Mapping[str, Any], name: str) -> Any:
    if name not in arguments:
        raise invalid_argument(f"the value needs {name!r}", field=name)
    return arguments[name]


def knowledge_call(*, user: Any, consumer_id: UUID, page: str, request: Request) -> Any:
    arguments = _arguments(request)
    common: dict[str, Any] = {"user": user, "project_id": consumer_id, "alias": request.alias}
    origin = Origin(via="bridge", page=page)
    return _CALLS[request.op](request, arguments, common, origin)


def _document_id(request: Request) -> str:
    if request.key is None:  # _arguments refused this already; here for the type
        raise invalid_argument(f"{request.op} needs the document id in 'key'", field="key")
    return request.key


def _list(request: Request, args: Mapping[str, Any], common: Any, origin: Origin) -> Any:
    return knowledge.project_knowledge_list(cursor=args.get("cursor"), **common).as_dict()


def _get(request: Request, args: Mapping[str, Any], common: Any, origin: Origin) -> Any:
    return knowledge.project_knowledge_get(document_id=_document_id(request), **common).as_dict()


def _create(request: Request, args: Mapping[str, Any], common: Any, origin: Origin) -> Any:
    return knowledge.project_knowledge_create(
        title=_required(args, "title"),
        markdown=_required(args, "markdown"),
        document_id=request.key,
        origin=origin,
        **common,
    ).as_dict()


def _edit(request: Request, args: Mapping[str, Any], common: Any, origin: Origin) -> Any:
    return knowledge.project_knowledge_edit(
        document_id=_document_id(request),
        title=args.get("title"),
        markdown=args.get("markdown"),
        origin=origin,
        **common,
    ).as_dict()


def _delete(request: Request, args: Mapping[str, Any], common: Any, origin: Origin) -> Any:
    deleted = knowledge.project_knowledge_delete(
        document_id=_document_id(request), origin=origin, **common
    )
    return {"deleted": deleted}


def _search(request: Request, args: Mapping[str, Any], common: Any, origin: Origin) -> Any:
    return knowledge.project_knowledge_search(
        query=_required(args, "query"),
        document_id=args.get("documentId"),
        before_lines=args.get("beforeLines", 0),
        after_lines=args.get("afterLines", 0),
        **common,
    ).as_dict()


def _read_lines(request: Request, args: Mapping[str, Any], common: Any, origin: Origin) -> Any:
    return knowledge.project_knowledge_read_lines(
        document_id=_document_id(request),
        start_line=_required(args, "start"),
        end_line=args.get("end"),
        **common,
    ).as_dict()


_CALLS: Final[dict[str, Callable[[Request, Mapping[str, Any], Any, Origin], Any]]] = {
    "knowledge.list": _list,
    "knowledge.get": _get,
    "knowledge.create": _create,
    "knowledge.edit": _edit,
    "knowledge.delete": _delete,
    "knowledge.search": _search,
    "knowledge.readLines": _read_lines,
}
