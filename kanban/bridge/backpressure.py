"""A socket's send buffer is bounded: a peer that stops reading is told to resync once it
reads again, instead of the worker holding every event for it.

Daphne's transport (Twisted) buffers whatever its peer has not taken, without limit: a
page on a stalled link, a stopped process or a tab the browser froze would make the worker
hold every later event of its boards. Past ``KANBAN_SOCKET_BUFFER_BYTES`` of such backlog
the hub writes the socket no more events; once the peer has taken all but a quarter of it,
each of the socket's subscriptions gets one resync (watches ``resync: true``, subscribes
``revision: "resync"``) standing for everything skipped. Replies to the socket's own
requests still go out: a request is the peer reading again, and its rate is bounded.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from django.conf import settings

from kanban.bridge.subscription import Socket
from kanban.observability.metrics import SLOW_SOCKETS

logger = logging.getLogger("kanban.bridge.hub")

#: How often the sockets held back are asked whether their peer caught up.
DRAIN_POLL_SECONDS: Final = 0.1


class SlowSockets:
    """The sockets of one hub whose backlog passed the bound, until their peer drains it."""

    def __init__(self, caught_up: Callable[[Socket], Awaitable[None]]) -> None:
        self.caught_up = caught_up
        self.behind: set[Socket] = set()
        #: Sockets held back so far (tests and logs read it).
        self.overflows = 0
        self._watch: asyncio.Task[None] | None = None

    def admits(self, socket: Socket) -> bool:
        """Whether an event may be written to ``socket`` now. One that may not is skipped,
        and its subscriptions resync once it drained."""
        if socket in self.behind:
            return False
        if socket.backlog() <= settings.KANBAN_SOCKET_BUFFER_BYTES:
            return True
        self.behind.add(socket)
        self.overflows += 1
        SLOW_SOCKETS.inc()
        logger.warning(
            "a socket's peer left %d bytes unread; holding its events back until it reads",
            socket.backlog(),
        )
        if self._watch is None:
            self._watch = asyncio.create_task(self._watch_drain())
        return False

    def forget(self, socket: Socket) -> None:
        self.behind.discard(socket)

    async def _watch_drain(self) -> None:
        try:
            while self.behind:
                await asyncio.sleep(DRAIN_POLL_SECONDS)
                low = settings.KANBAN_SOCKET_BUFFER_BYTES // 4
                for socket in [s for s in self.behind if s.backlog() <= low]:
                    self.behind.discard(socket)
                    try:
                        await self.caught_up(socket)
                    except Exception:
                        logger.exception("resyncing a socket that caught up failed")
        finally:
            self._watch = None
