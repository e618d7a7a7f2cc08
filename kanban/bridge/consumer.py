"""The bridge websocket: one per board page view, ``/ws/boards/{projectId}/``.

The consumer project comes from the URL, the user from the session, the target from the
consumer's alias. Every message is validated again and checked through the one access
function: nothing captured at connect is trusted later.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any
from uuid import UUID

from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.db import DatabaseError

from kanban.access.context import plugin_context
from kanban.bridge import frames, ops, service
from kanban.bridge.hub import ReadRules, Subscription, get_hub
from kanban.bridge.threads import NoConnectionCloseDispatch, in_thread
from kanban.data.request_size import max_request_bytes
from kanban.observability.logs import new_context_id
from kanban.observability.metrics import FRAMES, SOCKETS
from kanban.projects import boards
from kanban.quotas import deployment as quotas
from kanban.quotas.worker import QUOTA, TokenBucket
from storage import jsoncodec
from storage.errors import ErrorCode, KanbanError, invalid_argument

logger = logging.getLogger(__name__)


class BridgeConsumer(NoConnectionCloseDispatch, AsyncWebsocketConsumer):
    user_id: int
    consumer_id: UUID
    #: Seam: no per-socket channel on the layer. Events reach sockets through the process's
    #: hub, and a channel per socket cost a pending layer receive (memory, Redis work) each.
    #: Pinned in tests/kanban/bridge/test_seams.py.
    channel_layer_alias = "kanban.bridge.consumer-has-no-channel"

    async def connect(self) -> None:
        new_context_id("socket")  # what this socket does is logged under its own id
        user = self.scope.get("user")
        try:
            self.consumer_id = UUID(str(self.scope["url_route"]["kwargs"]["project_id"]))
            await in_thread(boards.access_board)(user=user, project_id=self.consumer_id)
        except ValueError:
            await self.close()  # before accept: the handshake is refused with 403
            return
        except KanbanError:
            # Accepted only to be closed with a code a page can read: a refused handshake
            # reaches a browser as 1006, like a network fault, and a host that lost access
            # while reconnecting would keep trying forever. 4401: sign in; 4403: no access.
            signed_in = bool(getattr(user, "is_authenticated", False))
            await self.accept()
            await self.close(
                code=frames.CLOSE_FORBIDDEN if signed_in else frames.CLOSE_UNAUTHENTICATED
            )
            return
        except DatabaseError:
            # Not a refusal: an exhausted pool or a database restart. Say so, so the client
            # retries rather than reading a 403 as "not allowed".
            logger.warning("bridge connect could not check access", exc_info=True)
            await self._try_again_later()
            return
        if not QUOTA.open(user.pk):
            # This person holds as many sockets here as one may; the host retries later.
            await self._try_again_later()
            return
        handle = await quotas.socket_open(user_id=user.pk)
        if handle is None:
            QUOTA.close(user.pk)  # as many as one may across the deployment
            await self._try_again_later()
            return
        self.quota_handle: str = handle
        self.counted = True
        SOCKETS.inc()
        self.user = user
        self.user_id = user.pk
        self.page = f"/boards/{self.consumer_id}/"
        self.subscriptions: dict[str | None, Subscription] = {}
        self.watches: dict[str | None, Subscription] = {}
        self.bucket = TokenBucket(settings.KANBAN_BRIDGE_RATE, settings.KANBAN_BRIDGE_BURST)
        self.hub = get_hub()
        # What the page was last told, as JSON text: the same for a re-check that changed
        # nothing, and a few hundred bytes where the context's dicts took kilobytes.
        self.context_text: str | None = None
        await self.accept()
        await self.hub.add_socket(self)
        # Read once the hub hears this socket's access changes, so none falls in between;
        # a re-check that came first already sent it.
        try:
            context = await in_thread(plugin_context)(user=user, project_id=self.consumer_id)
        except KanbanError as error:
            signed_out = error.code == ErrorCode.UNAUTHENTICATED
            await self.close(
                code=frames.CLOSE_UNAUTHENTICATED if signed_out else frames.CLOSE_FORBIDDEN
            )
            return
        await self.send_context(context)

    async def _try_again_later(self) -> None:
        await self.accept()
        await self.close(code=frames.CLOSE_TRY_AGAIN_LATER)

    async def disconnect(self, code: int) -> None:
        if getattr(self, "counted", False):
            self.counted = False
            QUOTA.close(self.user_id)
            SOCKETS.dec()
            await quotas.socket_close(user_id=self.user_id, handle=self.quota_handle)
        hub = getattr(self, "hub", None)
        if hub is not None:
            await hub.remove_socket(self)

    async def send_context(self, context: dict[str, Any]) -> None:
        text = jsoncodec.encode(context)
        if text != self.context_text:
            self.context_text = text
            await self.reply(frames.context_event(context))

    def write_frame(self, frame: bytes) -> bool:
        """Seam: an event's frame, encoded once by the hub, written straight to the
        connection under daphne. Daphne hands a socket ``send = partial(server.handle_reply,
        protocol)``, whose ``protocol`` is autobahn's websocket over a Twisted TCP
        ``transport``. For each of 1,000 sockets, autobahn framing the same text again, and
        Twisted registering and unregistering the socket with the event loop around one
        ``send``, were most of a fan-out. So while autobahn has nothing queued and Twisted
        nothing buffered, the frame goes to the socket itself; whatever the kernel does not
        take at once is left to Twisted to buffer and finish, in order. Anything else
        (another server, a test's communicator, a closing socket) answers False and the
        frame goes the ASGI way. Pinned in tests/kanban/bridge/test_seams.py."""
        protocol = getattr(self.base_send, "args", (None,))[0]
        if getattr(protocol, "state", None) != getattr(protocol, "STATE_OPEN", object()):
            return False
        if getattr(protocol, "send_queue", True):
            return False  # autobahn holds frames back: ours must come after them
        transport = getattr(protocol, "transport", None)
        if transport is None or not transport.connected or transport._writeDisconnected:
            return False
        sent = 0
        if not transport._tempDataBuffer and transport.offset >= len(transport.dataBuffer):
            try:
                sent = transport.socket.send(frame)
            except BlockingIOError:
                sent = 0
            except OSError:
                return False  # the peer is gone; the ASGI way reports it as usual
        if sent < len(frame):
            transport.write(frame[sent:])
        return True

    def backlog(self) -> int:
        """Seam: what Twisted holds for this connection, not yet taken by the kernel (its
        ``dataBuffer`` past ``offset``, and ``_tempDataLen`` not yet joined to it), as the
        transport ``write_frame`` reaches; 0 on any other server. Pinned in
        tests/kanban/bridge/test_backpressure.py."""
        protocol = getattr(self.base_send, "args", (None,))[0]
        transport: Any = getattr(protocol, "transport", None)
        try:
            held = len(transport.dataBuffer) - transport.offset + transport._tempDataLen
        except (AttributeError, TypeError):
            return 0
        return int(held)

    async def send_text(self, text: str) -> None:
        # Seam: straight to the server's send. The hub calls this once per subscriber per
        # event, and Channels' two ``send`` layers above it were a sixth of each fan-out
        # send. Pinned to send what Channels would in tests/kanban/bridge/test_seams.py.
        await self.base_send({"type": "websocket.send", "text": text})

    async def reply(self, payload: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(payload, ensure_ascii=False, separators=(",", ":")))

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        frame: Any = None
        try:
            if text_data is None:
                raise invalid_argument("frames are JSON text, not binary")
            if len(text_data) > max_request_bytes():
                raise KanbanError(ErrorCode.TOO_LARGE, "frame is too large")
            frame = jsoncodec.decode(text_data)
            # After decoding, so the refusal can name the request it refuses.
            if not (
                self.bucket.take()
                and QUOTA.take(self.user_id)
                and await quotas.message_take(user_id=self.user_id)
            ):
                raise KanbanError(ErrorCode.RATE_LIMITED, "too many bridge requests; slow down")
            request = frames.check_frame(frame)
            result = await self.handle_or_unavailable(request)
        except KanbanError as error:
            FRAMES.labels(frames.op_of(frame), str(error.code)).inc()
            await self.reply(frames.reply_error(frames.request_id_of(frame), error))
            if error.code == ErrorCode.UNAUTHENTICATED:
                await self.close(code=frames.CLOSE_UNAUTHENTICATED)
            return
        FRAMES.labels(request.op, "ok").inc()
        await self.reply(frames.reply_ok(request.id, result))

    async def handle_or_unavailable(self, request: frames.Request) -> Any:
        try:
            return await self.handle(request)
        except DatabaseError as failure:
            # An exhausted pool or a database restart: no fault of this request, and no
            # reason to end the socket (1011) and every watch on it; the page may ask again.
            logger.warning("bridge %s could not reach the database", request.op, exc_info=True)
            raise KanbanError(
                ErrorCode.UNAVAILABLE, "the database did not answer in time; try again shortly"
            ) from failure

    async def handle(self, request: frames.Request) -> Any:
        return await ops.dispatch(self, page=self.page, request=request)

    async def recheck(self, subscriptions: Sequence[Subscription]) -> None:
        """Called by the hub after an access change that may concern this socket."""
        try:
            verdicts = await in_thread(service.recheck_socket)(
                user_id=self.user_id,
                session_key=self.scope.get("session_key"),
                consumer_id=self.consumer_id,
                aliases=[sub.alias for sub in subscriptions],
            )
        except Exception:
            # The change may have taken this socket's access away and it cannot be checked:
            # the socket must neither go on under the old rules nor hold its subscriptions'
            # events for ever. The page reconnects, and its next socket is checked afresh.
            logger.exception("bridge re-check failed; the socket is asked to reconnect")
            await self.close(code=frames.CLOSE_TRY_AGAIN_LATER)
            return
        if verdicts.user is None:
            await self._end(ErrorCode.UNAUTHENTICATED, frames.CLOSE_UNAUTHENTICATED)
            return
        self.user = verdicts.user
        if verdicts.context is None:
            # No longer allowed to open the board at all (removed from it, or it is gone):
            # nothing this socket holds is theirs any more. ``not_found``, as the access
            # decision says to a non-member.
            await self._end(ErrorCode.NOT_FOUND, frames.CLOSE_FORBIDDEN)
            return
        await self.send_context(verdicts.context)
        for sub in subscriptions:
            outcome = verdicts.rules.get(sub.alias)
            if isinstance(outcome, ReadRules):
                await self.hub.release(sub, outcome)
            else:
                await self._invalidate(sub, outcome or ErrorCode.FORBIDDEN)

    async def _end(self, code: ErrorCode, close_code: int) -> None:
        for sub in [*self.subscriptions.values(), *self.watches.values()]:
            await self._invalidate(sub, code)
        await self.close(code=close_code)

    async def _invalidate(self, sub: Subscription, code: ErrorCode) -> None:
        held = self.watches if sub.watch else self.subscriptions
        if held.get(sub.alias) is sub:
            del held[sub.alias]
        # Told first, its events held (a re-check holds them already) so that none can follow
        # the news: releasing the last subscription on a board waits on the channel layer to
        # leave the board's group, which must not delay what the page is told.
        sub.held = sub.held or []
        await self.reply(frames.invalidated_event(sub.alias, str(code)))
        await self.hub.release(sub, None)
