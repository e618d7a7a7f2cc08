"""The channel-layer group a project's committed changes are published to, and how a
follower listens to it: one name and one receive loop for the bridge's hub, which
publishes and follows it, and for MCP resource subscriptions, which follow it too."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any
from uuid import UUID

from channels import DEFAULT_CHANNEL_LAYER
from channels.layers import InMemoryChannelLayer, channel_layers, get_channel_layer

#: The layer message a group carries: ``{"type": CHANGED, "project", "changes": [[kind,
#: key, revision, value text, deleted, source], ...], ...}`` (``kanban.bridge.publish``).
CHANGED = "kv.changed"


def project_group(project_id: UUID) -> str:
    return f"kanban.kv.{project_id}"


def follower_layer() -> Any:
    """A follower's layer: an instance of its own, since a cross-process layer
    (channels_redis) binds its receive state to one event loop. The in-memory layer must be
    shared: its groups live in the instance, and that is how publishers in this process
    reach the follower."""
    shared = get_channel_layer()
    if shared is None or isinstance(shared, InMemoryChannelLayer):
        return shared
    return channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)


async def receive_forever(
    layer: Any, channel: str, *, failed: Callable[[], None], retry_seconds: float
) -> AsyncIterator[dict[str, Any]]:
    """Every message the layer hands ``channel``, for as long as the follower listens. A
    receive that fails (Redis is down) calls ``failed`` inside its ``except``, so a log
    line there can carry the exception, and is tried again after ``retry_seconds`` rather
    than spinning; the follower rejoins its groups on its own schedule."""
    while True:
        try:
            message = await layer.receive(channel)
        except asyncio.CancelledError:
            raise
        except Exception:
            failed()
            await asyncio.sleep(retry_seconds)
            continue
        yield message
