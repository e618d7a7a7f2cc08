"""What the websocket consumer asks of the access decision itself: whether a socket may
follow a project's changes (``subscription_access``, on the event loop where
``storage.aio`` says reads may run there), and the re-check of a socket after an access
change. Every other op is a row of ``kanban.bridge.ops``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from kanban.access.context import plugin_context
from kanban.access.decision import Access, Op, aaccess_project_data, access_project_data
from kanban.bridge.auth import session_user_of
from kanban.bridge.hub import ReadRules
from kanban.bridge.threads import in_thread
from storage import aio
from storage.errors import ErrorCode, KanbanError


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
