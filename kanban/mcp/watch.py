"""``resources/subscribe`` for Boards: a session that subscribed to ``kanban://boards/{id}``
(or its cards) hears ``notifications/resources/updated`` whenever the board's data changes,
from the same channel-layer messages the bridge's hub delivers to the Board
(``kanban.data.change_groups``): a change made in a browser, over REST or by another agent,
on any worker, reaches the session on the worker that holds it.

One watcher per worker event loop owns one layer channel and joins a board's group while a
session of this worker subscribes to it. Before each notification the token is checked
again (``check_readable``): a token revoked or a person who left the board stops hearing
the board, and the subscription ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from typing import Any, Final
from uuid import UUID

from channels.db import database_sync_to_async
from django.utils import timezone

from kanban.data.change_groups import CHANGED, follower_layer, project_group, receive_forever
from kanban.mcp.resources import ResourceNotFound, check_readable
from kanban.models import ApiToken
from storage.loops import PerLoop

logger = logging.getLogger(__name__)

#: How often the watched groups are joined again (well within a day), and how soon after
#: the layer failed.
REJOIN_SECONDS = 60.0
RETRY_SECONDS = 1.0
#: How soon a failed read of the layer is tried again.
RECEIVE_RETRY_SECONDS = 0.5


def _recheck(token_id: int, uri: str) -> bool:
    token = (
        ApiToken.objects.select_related("user").filter(pk=token_id, revoked_at__isnull=True).first()
    )
    if token is None or not token.user.is_active:
        return False
    if token.expires_at is not None and token.expires_at <= timezone.now():
        return False
    try:
        check_readable(token=token, uri=uri)
    except ResourceNotFound:
        return False
    return True


class Watcher:
    def __init__(self) -> None:
        self.layer: Any = follower_layer()
        self.channel: str | None = None
        #: board -> session id -> (the session to notify, token id, the URIs it subscribed
        #: to). By id: each request of a session hands its handler a session object of its own.
        self.sessions: dict[UUID, dict[str, tuple[Any, int, set[str]]]] = defaultdict(dict)
        self._lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        #: False from a failed layer call until every watched group is joined again.
        self.layer_ok = True

    async def _started(self) -> str:
        if self.channel is None:
            self.channel = await self.layer.new_channel("kanban.mcp.")
            loop = asyncio.get_running_loop()
            self._tasks = [loop.create_task(self._listen()), loop.create_task(self._rejoin())]
        return self.channel

    async def subscribe(
        self, *, session_id: str, session: Any, token: ApiToken, board: UUID, uri: str
    ) -> None:
        async with self._lock:
            channel = await self._started()
            first = not self.sessions.get(board)
            _, _, uris = self.sessions[board].setdefault(session_id, (session, token.pk, set()))
            uris.add(uri)
            if first:
                try:
                    await self.layer.group_add(project_group(board), channel)
                except Exception:
                    # Subscribed all the same: the rejoin joins it once the layer answers,
                    # and tells the subscriber to read again.
                    logger.warning("MCP watcher could not join a group", exc_info=True)
                    self.layer_ok = False

    async def unsubscribe(self, *, session_id: str, board: UUID, uri: str) -> None:
        async with self._lock:
            held = self.sessions.get(board, {}).get(session_id)
            if held is not None:
                held[2].discard(uri)
                if not held[2]:
                    del self.sessions[board][session_id]
            await self._leave_if_unwatched(board)

    async def _leave_if_unwatched(self, board: UUID) -> None:
        if board in self.sessions and not self.sessions[board]:
            del self.sessions[board]
            if self.channel is not None:
                with contextlib.suppress(Exception):
                    await self.layer.group_discard(project_group(board), self.channel)

    async def _listen(self) -> None:
        assert self.channel is not None
        async for message in receive_forever(
            self.layer,
            self.channel,
            failed=self._receive_failed,
            retry_seconds=RECEIVE_RETRY_SECONDS,
        ):
            if message.get("type") != CHANGED:
                continue
            try:
                await self._changed(UUID(message["project"]))
            except Exception:
                logger.exception("MCP watcher failed to notify")

    def _receive_failed(self) -> None:
        logger.warning("MCP watcher could not read the channel layer", exc_info=True)
        self.layer_ok = False

    async def _rejoin(self) -> None:
        """Join every watched group again, now and then: Redis forgets a group after a day
        (channels_redis's group expiry) and all of them when it restarts empty. After a
        failure, each subscriber is told its board changed: what happened meanwhile was
        not heard, so it reads again."""
        while True:
            await asyncio.sleep(REJOIN_SECONDS if self.layer_ok else RETRY_SECONDS)
            assert self.channel is not None
            try:
                for board in list(self.sessions):
                    await self.layer.group_add(project_group(board), self.channel)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("MCP watcher could not join its groups; retrying", exc_info=True)
                self.layer_ok = False
                continue
            if not self.layer_ok:
                self.layer_ok = True
                for board in list(self.sessions):
                    await self._changed(board)

    async def _changed(self, board: UUID) -> None:
        for session_id, (session, token_id, uris) in list(self.sessions.get(board, {}).items()):
            for uri in sorted(uris):
                if not await database_sync_to_async(_recheck)(token_id, uri):
                    await self.unsubscribe(session_id=session_id, board=board, uri=uri)
                    continue
                try:
                    await session.send_resource_updated(uri)
                except Exception:
                    # The session is gone (closed, timed out): nothing will read it again.
                    await self.unsubscribe(session_id=session_id, board=board, uri=uri)


_watchers: Final = PerLoop(Watcher)


def get_watcher() -> Watcher:
    return _watchers.get()
