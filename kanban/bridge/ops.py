"""The bridge's one op table: for each op the socket knows (``frames.WIRE_OPS``, read from
the protocol spec), the service that answers it, how a frame's ``key`` and ``value``
become that service's arguments, and where it runs.

Adding an op is the spec's entry, one row here and the service: the consumer, the frame
check and the dispatch below stay as they are. The rules an op obeys (who may, through
which alias, up to what size) are its service's; a row only maps arguments.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Protocol
from uuid import UUID

from kanban.bridge import frames, service, subscription
from kanban.bridge.frames import Request
from kanban.bridge.hub import Hub
from kanban.bridge.subscription import Subscription
from kanban.bridge.threads import in_thread
from kanban.data import attachments, entrypoints, notifications
from kanban.data import kv as kv_actions
from kanban.data.board import card_transfer
from kanban.data.board.transfer_targets import card_transfer_targets
from kanban.data.configurations import DEFAULT_ID, configuration_update
from kanban.data.knowledge import knowledge_action
from kanban.data.kv import Provenance
from kanban.data.target import Target
from storage import aio
from storage.addresses import check_text
from storage.errors import ErrorCode, KanbanError, invalid_argument
from storage.namespaces import MAX_USER_KEY_LENGTH
from storage.writes import ANY


class Runs(Enum):
    #: A synchronous service, on the thread pool (its own transaction and connection).
    THREAD = "thread"
    #: A read: its ``on_loop`` twin on the event loop where ``storage.aio`` reads there
    #: (no thread crossing: most of a ``get``'s cost, bench B2/B3), else in a thread.
    READ = "read"
    #: What the socket itself holds (its subscriptions and watches), on the event loop.
    SOCKET = "socket"


class Socket(subscription.Socket, Protocol):
    """What a socket op reads and changes of the consumer."""

    user: Any
    consumer_id: UUID
    hub: Hub
    subscriptions: dict[str | None, Subscription]
    watches: dict[str | None, Subscription]


@dataclass(frozen=True, slots=True)
class Call:
    """One frame as a row's argument mapping sees it."""

    request: Request
    target: Target
    page: str

    @property
    def provenance(self) -> Provenance:
        return Provenance(via="bridge", page=self.page)

    @property
    def value(self) -> dict[str, Any]:
        """An object op's ``value`` (``check_frame`` allowed only its fields), or none."""
        return self.request.value if isinstance(self.request.value, dict) else {}


@dataclass(frozen=True, slots=True)
class Row:
    #: A thread or read row's service, called with the mapped arguments; a socket row's
    #: coroutine, called with the socket first.
    handler: Callable[..., Any]
    arguments: Callable[[Call], dict[str, Any]]
    runs: Runs = Runs.THREAD
    #: A read row's event-loop twin, called with the same arguments.
    on_loop: Callable[..., Awaitable[Any]] | None = None
    #: The answer the SDK expects, from the service's (by default the service's own).
    answer: Callable[[Any], Any] | None = None


def _nothing(_: Any) -> dict[str, Any]:
    """An op whose SDK call resolves to nothing of the service's result."""
    return {}


# --- argument mappings: the frame's fields under the service's names -------------------------


def _kv(action: str, *, frame: Callable[[Request], dict[str, Any]]) -> Callable[[Call], Any]:
    def arguments(call: Call) -> dict[str, Any]:
        return {
            "action": action,
            "target": call.target,
            "arguments": frame(call.request),
            "provenance": call.provenance,
        }

    return arguments


def _key_and_value(request: Request) -> dict[str, Any]:
    """A write's ``key`` and ``value``; ``expectedRevision`` only when the frame has one."""
    arguments = {"key": request.key, "value": request.value}
    if request.expected_revision is not ANY:
        arguments["expectedRevision"] = request.expected_revision
    return arguments


def _knowledge(action: str) -> Callable[[Call], dict[str, Any]]:
    """The document id travels in ``key`` (a search names its one document as
    ``documentId``); everything else in ``value``."""

    def arguments(call: Call) -> dict[str, Any]:
        document = call.value.get("documentId") if action == "search" else call.request.key
        return {
            "action": action,
            "target": call.target,
            "document_id": document,
            "arguments": call.value,
            "provenance": call.provenance,
        }

    return arguments


def _transfer(call: Call) -> dict[str, Any]:
    """A card's copy or move: the card in ``key``, ``{targetProject, column}`` in ``value``,
    always from the page's own board."""
    if call.target.alias is not None:
        raise invalid_argument("a card is copied or moved from this board", field="alias")
    try:
        to = UUID(str(call.value.get("targetProject")))
    except ValueError:
        raise invalid_argument("targetProject is a board's id", field="targetProject") from None
    column = call.value.get("column")
    if column is not None and not isinstance(column, str):
        raise invalid_argument("column is a column id", field="column")
    return {
        "user": call.target.user,
        "project_id": call.target.project_id,
        "card": call.request.key or "",
        "target_project_id": to,
        "column": column,
        "provenance": call.provenance,
    }


def _transfer_targets(call: Call) -> dict[str, Any]:
    if call.target.alias is not None:
        raise invalid_argument("a card is copied or moved from this board", field="alias")
    return {"user": call.target.user, "project_id": call.target.project_id}


def _reach(call: Call) -> dict[str, Any]:
    """The page's project and, with an alias, the related one, as most services name them."""
    return {
        "user": call.target.user,
        "project_id": call.target.project_id,
        "alias": call.target.alias,
    }


def _attachment_delete(call: Call) -> dict[str, Any]:
    attachment_id = call.value.get("id")
    if not isinstance(attachment_id, str) or not attachment_id:
        raise invalid_argument("name the attachment: value {id}", field="id")
    return {
        **_reach(call),
        "card": call.request.key or "",
        "attachment_id": attachment_id,
        "provenance": call.provenance,
    }


def _configuration(call: Call) -> dict[str, Any]:
    """The key is the configuration the plugin shows: its id, or "default"."""
    key = call.request.key
    return {
        **_reach(call),
        "configuration_id": DEFAULT_ID if key == "default" else key,
        "values": call.request.value,
    }


def _notify(call: Call) -> dict[str, Any]:
    value = call.value
    return {
        "actor": call.target.user,
        "project_id": call.target.project_id,
        "alias": call.target.alias,
        "users": value.get("users"),
        "text": value.get("text"),
        "card": value.get("card"),
        "via": "bridge",
    }


def _alias(call: Call) -> dict[str, Any]:
    return {"alias": call.request.alias}


# --- socket ops: what this socket follows -------------------------------------------------


async def subscribe(socket: Socket, *, alias: str | None) -> dict[str, Any]:
    access = await service.subscription_access(
        user=socket.user, consumer_id=socket.consumer_id, alias=alias
    )
    if alias not in socket.subscriptions:
        sub = Subscription(socket, alias, access.target_id, access.read, access.knowledge_read)
        await _follow(socket, socket.subscriptions, sub)
    return {"subscribed": True}


async def unsubscribe(socket: Socket, *, alias: str | None) -> dict[str, Any]:
    await _stop(socket, socket.subscriptions, alias)
    return {"subscribed": False}


async def watch(socket: Socket, *, alias: str | None, prefix: object) -> dict[str, Any]:
    """A subscription whose events name the keys (under ``prefix``) that changed. One per
    alias: watching again replaces the prefix."""
    checked = check_text(
        prefix or "", field="prefix", allow_empty=True, max_length=MAX_USER_KEY_LENGTH
    )
    access = await service.subscription_access(
        user=socket.user, consumer_id=socket.consumer_id, alias=alias
    )
    await _stop(socket, socket.watches, alias)
    sub = Subscription(
        socket,
        alias,
        access.target_id,
        access.read,
        access.knowledge_read,
        watch=True,
        prefix=checked,
    )
    await _follow(socket, socket.watches, sub)
    return {"watching": True}


async def unwatch(socket: Socket, *, alias: str | None) -> dict[str, Any]:
    await _stop(socket, socket.watches, alias)
    return {"watching": False}


async def _follow(
    socket: Socket, following: dict[str | None, Subscription], sub: Subscription
) -> None:
    following[sub.alias] = sub
    await socket.hub.subscribe(sub)


async def _stop(
    socket: Socket, following: dict[str | None, Subscription], alias: str | None
) -> None:
    """``socket`` stops following ``alias`` by ``following`` (its subscriptions or its
    watches), if it did."""
    sub = following.pop(alias, None)
    if sub is not None:
        await socket.hub.unsubscribe(sub)


# --- the table -------------------------------------------------------------------------------

_KV: Final = kv_actions.kv_action
_KV_READ: Final = kv_actions.kv_read_action

TABLE: Final[dict[str, Row]] = {
    "get": Row(_KV, _kv("get", frame=lambda r: {"key": r.key}), Runs.READ, on_loop=_KV_READ),
    "getMany": Row(
        _KV, _kv("getMany", frame=lambda r: {"keys": r.value}), Runs.READ, on_loop=_KV_READ
    ),
    "set": Row(_KV, _kv("set", frame=_key_and_value)),
    "history": Row(_KV, _kv("history", frame=lambda r: {"key": r.key, **(r.value or {})})),
    "subscribe": Row(subscribe, _alias, Runs.SOCKET),
    "unsubscribe": Row(unsubscribe, _alias, Runs.SOCKET),
    "watch": Row(watch, lambda c: {**_alias(c), "prefix": c.value.get("prefix")}, Runs.SOCKET),
    "unwatch": Row(unwatch, _alias, Runs.SOCKET),
    "configuration.set": Row(configuration_update, _configuration, answer=_nothing),
    "notify": Row(notifications.notification_send, _notify),
    "knowledge.list": Row(knowledge_action, _knowledge("list")),
    "knowledge.get": Row(knowledge_action, _knowledge("get")),
    "knowledge.create": Row(knowledge_action, _knowledge("create")),
    "knowledge.edit": Row(knowledge_action, _knowledge("edit")),
    "knowledge.delete": Row(knowledge_action, _knowledge("delete")),
    "knowledge.search": Row(knowledge_action, _knowledge("search")),
    "knowledge.readLines": Row(knowledge_action, _knowledge("read_lines")),
    "entrypoints.list": Row(entrypoints.project_entrypoints_list, _reach),
    "entrypoints.run": Row(
        entrypoints.project_entrypoint_run,
        lambda c: {**_reach(c), "entrypoint_id": c.request.key, "args": c.value.get("args")},
    ),
    "attachments.list": Row(
        attachments.attachment_list, lambda c: {**_reach(c), "card": c.request.key or ""}
    ),
    "attachments.delete": Row(attachments.attachment_delete, _attachment_delete, answer=_nothing),
    "cards.targets": Row(card_transfer_targets, _transfer_targets),
    "cards.copy": Row(card_transfer.card_copy, _transfer),
    "cards.move": Row(card_transfer.card_move, _transfer),
}


def missing_rows() -> tuple[set[str], set[str]]:
    """The spec's ops with no row, and the rows of no op in the spec: both empty."""
    return set(frames.WIRE_OPS.arguments) - set(TABLE), set(TABLE) - set(frames.WIRE_OPS.arguments)


# --- dispatch --------------------------------------------------------------------------------


def _row(request: Request) -> Row:
    row = TABLE.get(request.op)
    if row is None:
        raise KanbanError(ErrorCode.INVALID_ARGUMENT, "unknown op", field="op")
    return row


def bridge_call(*, user: Any, consumer_id: UUID, page: str, request: Request) -> Any:
    """A thread or read row's call, synchronously: what runs on the thread pool (and what
    tests call directly)."""
    row = _row(request)
    if row.runs is Runs.SOCKET:
        raise invalid_argument(f"{request.op} belongs to a socket", field="op")
    call = Call(request, Target(user=user, project_id=consumer_id, alias=request.alias), page)
    result = row.handler(**row.arguments(call))
    return result if row.answer is None else row.answer(result)


async def dispatch(socket: Socket, *, page: str, request: Request) -> Any:
    """One checked frame from ``socket``, answered by its row."""
    row = _row(request)
    if row.runs is Runs.SOCKET:
        target = Target(user=socket.user, project_id=socket.consumer_id, alias=request.alias)
        return await row.handler(socket, **row.arguments(Call(request, target, page)))
    if row.runs is Runs.READ and row.on_loop is not None and aio.reads_on_loop():
        target = Target(user=socket.user, project_id=socket.consumer_id, alias=request.alias)
        return await row.on_loop(**row.arguments(Call(request, target, page)))
    return await in_thread(bridge_call)(
        user=socket.user, consumer_id=socket.consumer_id, page=page, request=request
    )
