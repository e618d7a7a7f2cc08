"""The inbox socket: every page of a signed-in person holds one (``/ws/inbox/``) and hears
``{"unread": n}`` when it opens and whenever their inbox changes, so the top bar's count is
current while the page is open. It takes no requests.

One of the person's sockets (``KANBAN_SOCKETS_PER_USER`` counts it with the bridge's, per
worker and, with Redis, for the deployment, as the bridge does), on the channel layer's
group ``inbox_group(user)``: one layer message per person per change, whatever the number of
their pages.
"""

from __future__ import annotations

import logging
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from django.db import DatabaseError

from kanban.bridge import frames
from kanban.bridge.auth import session_user_of
from kanban.bridge.publish import inbox_group
from kanban.bridge.threads import NoConnectionCloseDispatch, in_thread
from kanban.data.notifications import inbox_unread
from kanban.observability.logs import new_context_id
from kanban.quotas import deployment as quotas
from kanban.quotas.worker import QUOTA
from storage import jsoncodec

logger = logging.getLogger(__name__)


class InboxConsumer(NoConnectionCloseDispatch, AsyncWebsocketConsumer):
    async def connect(self) -> None:
        new_context_id("inbox")
        user = self.scope.get("user")
        await self.accept()
        if not getattr(user, "is_authenticated", False):
            await self.close(code=frames.CLOSE_UNAUTHENTICATED)
            return
        if not QUOTA.open(user.pk):
            await self.close(code=frames.CLOSE_TRY_AGAIN_LATER)
            return
        handle = await quotas.socket_open(user_id=user.pk)
        if handle is None:
            QUOTA.close(user.pk)  # as many as one may across the deployment
            await self.close(code=frames.CLOSE_TRY_AGAIN_LATER)
            return
        self.quota_handle = handle
        self.user = user
        self.group = inbox_group(user.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.send_count()

    async def disconnect(self, code: int) -> None:
        user = getattr(self, "user", None)
        if user is not None:
            self.user = None
            QUOTA.close(user.pk)
            await quotas.socket_close(user_id=user.pk, handle=self.quota_handle)
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        await self.close(code=4400)  # nothing to ask: a client that talks is not ours

    async def inbox_changed(self, message: dict[str, Any]) -> None:
        """Counts again, for the session's user still (after a sign-out or a password
        change the socket ends instead, as a page request would be refused)."""
        if self.user is None:
            return
        try:
            _, user = await in_thread(session_user_of)(session_key=self.scope.get("session_key"))
        except DatabaseError:
            logger.warning("inbox could not re-check its session", exc_info=True)
            return
        if getattr(user, "pk", None) != self.user.pk:
            await self.close(code=frames.CLOSE_UNAUTHENTICATED)
            return
        await self.send_count()

    async def send_count(self) -> None:
        try:
            unread = await in_thread(inbox_unread)(user=self.user)
        except DatabaseError:
            logger.warning("inbox count unavailable", exc_info=True)
            return
        await self.send(text_data=jsoncodec.encode({"unread": unread}))
