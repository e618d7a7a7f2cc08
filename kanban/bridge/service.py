"""The bridge's service calls: what the websocket consumer asks of the database layer.

Each call goes through the one access decision. The synchronous ones run in a thread
(tests call them directly as well); ``bridge_request`` and ``subscription_access`` are the
consumer's, and read on the event loop where ``storage.aio`` says reads may run there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID

from kanban.access.context import plugin_context
from kanban.access.decision import Access, Op, aaccess_project_data, access_project_data
from kanban.bridge import attachment_calls, card_calls, knowledge_calls
from kanban.bridge.auth import session_user_of
from kanban.bridge.frames import ATTACHMENT_OPS, CARD_OPS, KNOWLEDGE_OPS, Request
from kanban.bridge.hub import ReadRules
from kanban.bridge.threads import in_thread
from kanban.data import entrypoints, notifications
from kanban.data import kv as kv_actions
from kanban.data.configurations import DEFAULT_ID, configuration_update
from storage import aio
from storage.errors import ErrorCode, KanbanError, invalid_argument
from storage.writes import ANY


def access_subscription(*, user: Any, consumer_id: UUID, alias: str | None) -> Access:
    return access_project_data(
        user=user, consumer_id=consumer_id, alias=alias, op=Op.SUBSCRIBE, key=None
    )


async def subscription_access(*, user: Any, consumer_id: UUID, alias: str | None) -> Access:
    """``access_subscription`` from the event loop: on it where reads run there."""
    if aio.reads_on_loop():
        return await aaccess_project_data(
            user=user, consumer_id=consumer_id, alias=alias, op=Op.SUBSCRIBE, key=None
        )
    return await in_thread(access_subscription)(user=user, consumer_id=consumer_id, alias=alias)


async def bridge_request(*, user: Any, consumer_id: UUID, page: str, request: Request) -> Any:
    """One call from the event loop: a KV read on the loop where reads run there (no thread
    crossing: most of a ``get``'s cost, bench B2/B3), anything else in a thread."""
    if request.op in kv_actions.LOOP_ACTIONS and aio.reads_on_loop():
        return await kv_actions.kv_read_action(
            action=request.op,
            user=user,
            project_id=consumer_id,
            alias=request.alias,
            arguments=kv_arguments(request),
        )
    return await in_thread(bridge_call)(
        user=user, consumer_id=consumer_id, page=page, request=request
    )


#: The KV ops, named as their actions are.
KV_OPS: Final = frozenset({"get", "getMany", "set", "history"})


def kv_arguments(request: Request) -> dict[str, Any]:
    """A frame's arguments under the action's names: a batched read's keys travel in
    ``value``, as do a history read's ``limit`` and ``before``; ``expectedRevision`` only
    when the frame has one."""
    if request.op == "getMany":
        return {"keys": request.value}
    if request.op == "history":
        return {"key": request.key, **(request.value or {})}
    arguments = {"key": request.key, "value": request.value}
    if request.expected_revision is not ANY:
        arguments["expectedRevision"] = request.expected_revision
    return arguments


def bridge_call(*, user: Any, consumer_id: UUID, page: str, request: Request) -> Any:
    if request.op in KV_OPS:
        return kv_actions.kv_action(
            action=request.op,
            user=user,
            project_id=consumer_id,
            alias=request.alias,
            arguments=kv_arguments(request),
            provenance=kv_actions.Provenance(via="bridge", page=page),
        )
    if request.op == "configuration.set":
        # The key is the configuration the plugin shows: its id, or "default".
        if request.alias is not None:
            raise invalid_argument("a configuration belongs to this board", field="alias")
        configuration_update(
            user=user,
            project_id=consumer_id,
            configuration_id=DEFAULT_ID if request.key == "default" else request.key,
            values=request.value,
        )
        return {}
    if request.op in KNOWLEDGE_OPS:
        return knowledge_calls.knowledge_call(
            user=user, consumer_id=consumer_id, page=page, request=request
        )
    if request.op in ATTACHMENT_OPS:
        return attachment_calls.attachment_call(
            user=user, consumer_id=consumer_id, page=page, request=request
        )
    if request.op in CARD_OPS:
        return card_calls.card_call(user=user, consumer_id=consumer_id, page=page, request=request)
    if request.op == "notify":
        if request.alias is not None:
            raise invalid_argument("a plugin notifies members of its own board", field="alias")
        value = request.value or {}
        return notifications.notification_send(
            actor=user,
            project_id=consumer_id,
            users=value.get("users"),
            text=value.get("text"),
            card=value.get("card"),
            via="bridge",
        )
    if request.op == "entrypoints.list":
        return entrypoints.project_entrypoints_list(
            user=user, project_id=consumer_id, alias=request.alias
        )
    if request.op == "entrypoints.run":
        return entrypoints.project_entrypoint_run(
            user=user,
            project_id=consumer_id,
            alias=request.alias,
            entrypoint_id=request.key,
            args=(request.value or {}).get("args"),
        )
    raise KanbanError(ErrorCode.INVALID_ARGUMENT, "unknown op", field="op")


@dataclass
class Verdicts:
    """A socket's re-check: the fresh user (None = signed out or deactivated), per alias
    the read rules (KV and knowledge) that still apply or the error code that ends it, and
    the plugin's context now (None when the user may no longer open the board)."""

    user: Any
    rules: dict[str | None, ReadRules | ErrorCode] = field(default_factory=dict)
    context: dict[str, Any] | None = None


def recheck_socket(
    *, user_id: int, session_key: str | None, consumer_id: UUID, aliases: list[str | None]
) -> Verdicts:
    _, user = session_user_of(session_key=session_key)
    if not user.is_authenticated or user.pk != user_id:
        return Verdicts(user=None)
    verdicts = Verdicts(user=user)
    for alias in aliases:
        try:
            access = access_subscription(user=user, consumer_id=consumer_id, alias=alias)
            verdicts.rules[alias] = ReadRules(access.read, access.knowledge_read)
        except KanbanError as error:
            verdicts.rules[alias] = error.code
    try:
        verdicts.context = plugin_context(user=user, project_id=consumer_id)
    except KanbanError as error:
        if error.code == ErrorCode.UNAUTHENTICATED:  # the account changed under the socket
            return Verdicts(user=None)
        verdicts.context = None
    return verdicts
