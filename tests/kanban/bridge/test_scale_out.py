"""Several daphne workers behind one database and one Redis: a write through one worker
reaches a subscriber on another, an access change made anywhere invalidates everywhere, and
an idle socket outlives redis-py's default 5 s socket timeout."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from django.test import Client
from websockets.asyncio.client import ClientConnection

from kanban.access.grant_rules import NONE, Grant, Rule
from kanban.access.relationships import relationship_declare
from tests.factories import a_board_and_inventory, a_user
from tests.live import LiveServer, open_board_socket

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


def redis_reachable() -> bool:
    """Tests of the Redis layer run on the production stack, with ``REDIS_URL`` set (CI's
    second pass), not on the embedded default even when a Redis happens to be up."""
    if not os.environ.get("REDIS_URL"):
        return False
    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


pytestmark = [
    pytest.mark.redis,
    pytest.mark.skipif(not redis_reachable(), reason=f"needs Redis at {REDIS_URL}"),
]


@pytest.fixture
def redis_layer(settings: Any) -> dict[str, str]:
    """Point this process and its workers at one Redis layer with a private prefix."""
    prefix = f"scale-{uuid.uuid4().hex[:8]}"
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": 30}],
                "prefix": prefix,
            },
        }
    }
    return {"REDIS_URL": REDIS_URL, "KANBAN_REDIS_PREFIX": prefix}


@pytest.fixture
def scene(transactional_db: None) -> dict[str, Any]:
    bob = a_user("bob")
    stock = Rule("prefixes", ("stock:",))
    board, inventory = a_board_and_inventory(
        members={bob: "developer"}, grant=Grant(read=stock, write=stock)
    )
    client = Client()
    client.force_login(bob)
    cookie = f"{django_settings.SESSION_COOKIE_NAME}={client.cookies['sessionid'].value}"
    return {"bob": bob, "board": board, "inventory": inventory, "cookie": cookie}


async def open_socket(server: LiveServer, scene: dict[str, Any]) -> ClientConnection:
    return await open_board_socket(server, scene["board"].id, scene["cookie"])


class Wire:
    def __init__(self, socket: ClientConnection) -> None:
        self.socket, self.next_id, self.events = socket, 0, []  # type: list[Any]

    async def call(self, op: str, **fields: Any) -> dict[str, Any]:
        self.next_id += 1
        await self.socket.send(json.dumps({"v": 1, "id": self.next_id, "op": op, **fields}))
        while True:
            message = json.loads(await asyncio.wait_for(self.socket.recv(), 10))
            if message.get("id") == self.next_id:
                return message
            self.events.append(message)

    async def event(self, timeout: float = 10) -> dict[str, Any]:
        if self.events:
            return self.events.pop(0)
        return json.loads(await asyncio.wait_for(self.socket.recv(), timeout))


async def test_a_write_on_one_worker_reaches_a_subscriber_on_another_even_after_idling(
    live_servers: Callable[..., list[LiveServer]],
    redis_layer: dict[str, str],
    scene: dict[str, Any],
) -> None:
    first, second = live_servers(2, env=redis_layer)
    async with await open_socket(first, scene) as a, await open_socket(second, scene) as b:
        writer, listener = Wire(a), Wire(b)
        assert (await listener.call("subscribe", alias="inventory"))["ok"]
        await asyncio.sleep(7)  # idle past redis-py's default 5 s socket_timeout
        written = await writer.call("set", alias="inventory", key="stock:bolt", value=9)
        assert written["ok"], written
        event = await listener.event()
        assert event == {
            "v": 1,
            "event": "revision",
            "alias": "inventory",
            "revision": written["result"]["revision"],
        }


async def test_an_access_change_on_one_process_invalidates_subscribers_on_every_worker(
    live_servers: Callable[..., list[LiveServer]],
    redis_layer: dict[str, str],
    scene: dict[str, Any],
) -> None:
    from channels.db import database_sync_to_async

    servers = live_servers(2, env=redis_layer)
    sockets = [await open_socket(server, scene) for server in servers]
    wires = [Wire(socket) for socket in sockets]
    try:
        for wire in wires:
            assert (await wire.call("subscribe", alias="inventory"))["ok"]
        # The change is made here, in a third process; it travels through Redis.
        await database_sync_to_async(relationship_declare)(
            project=scene["inventory"],
            alias="board",
            project_id=scene["board"].id,
            grant=Grant(read=NONE, write=NONE),
        )
        for wire in wires:
            # The plugin is told what it may do now, then that its subscription ended.
            context = await wire.event()
            assert context["event"] == "context"
            assert context["context"]["related"]["inventory"]["can"]["read"] is False
            event = await wire.event()
            assert event == {
                "v": 1,
                "event": "invalidated",
                "alias": "inventory",
                "code": "forbidden",
            }
            refused = await wire.call("get", alias="inventory", key="stock:bolt")
            assert refused["error"]["code"] == "forbidden"
    finally:
        for socket in sockets:
            await socket.close()


async def test_a_late_heartbeat_asks_redis_whether_the_hubs_groups_are_still_there(
    redis_layer: dict[str, str],
) -> None:
    """The hub's seam into channels_redis: a late beat is told apart from a Redis that
    restarted empty by reading the hub's own member of its beat group."""
    from channels.layers import channel_layers

    from kanban.bridge.hub import Hub

    channel_layers.backends.clear()  # the layer of the patched settings
    hub = Hub()
    try:
        await hub._ensure_started()
        assert await hub._beat_group_kept() is True
        client = redis.Redis.from_url(REDIS_URL)
        client.delete(hub.layer._group_key(hub.beat_group))  # what an empty restart leaves
        assert await hub._beat_group_kept() is False
    finally:
        for task in hub._tasks:
            task.cancel()
        await asyncio.gather(*hub._tasks, return_exceptions=True)
        channel_layers.backends.clear()
