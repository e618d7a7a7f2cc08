"""Running the bridge's synchronous service calls off the event loop."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from channels.consumer import get_handler_name
from django.db import close_old_connections

T = TypeVar("T")


def in_thread(func: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """Run a service call on the thread pool. Each call is self-contained (its own
    transaction, its own pooled connection), so calls from different sockets need not queue
    behind one thread as Channels' thread-sensitive default would make them; one socket's
    calls still run one at a time, in order, because the consumer awaits each.

    The connection is given back inside the call: off the thread-sensitive path asgiref runs
    ``func`` in a copy of the caller's context, where Django keeps this thread's connection,
    and ``database_sync_to_async``'s own cleanup (outside that copy) never sees it; the
    connection would stay checked out of the pool forever."""

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> T:
        close_old_connections()
        try:
            return func(*args, **kwargs)
        finally:
            close_old_connections()

    return sync_to_async(call, thread_sensitive=False)


class NoConnectionCloseDispatch:
    """Seam: Channels' ``AsyncConsumer.dispatch`` awaits ``aclose_old_connections()`` before
    every message, a thread-sensitive ``sync_to_async``: every frame of every socket in the
    worker queued for one thread and back, and a bridge ``get`` that reads on the event
    loop crossed into a thread anyway, for a connection it never uses (bench B2/B3). The
    bridge's consumers touch no Django connection on the loop: reads use ``storage.aio``'s
    pool, and a call run in a thread closes its own connection around it (``in_thread``,
    ``database_sync_to_async``). So this dispatch is Channels' without the close. Pinned
    in tests/kanban/bridge/test_seams.py."""

    async def dispatch(self, message: dict[str, Any]) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)
