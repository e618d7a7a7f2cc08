"""Agents watch a Board: a session subscribed to ``kanban://boards/{id}`` hears
``notifications/resources/updated`` within a second of a change someone else made through
REST on the worker (the in-memory layer) or, with ``REDIS_URL``, through the KV service in
another process (the Redis layer, as between workers); unsubscribing stops it, and a token
without read on a board cannot subscribe to it. The MCP SDK's own client, over real HTTP
with a session (the client keeps the Mcp-Session-Id its initialize got)."""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.request
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from bench.nginx import NGINX, nginx_in_front_of
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from kanban.models import Project
from tests.factories import a_board, users
from tests.kanban.bridge.test_scale_out import redis_layer, redis_reachable
from tests.kanban.mcp.test_mcp import token_for
from tests.live import LiveServer, start_live_servers

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["redis_layer"]

#: How soon a change must reach a subscribed agent.
WITHIN = 1.0


@pytest.fixture
def boards(transactional_db: None) -> dict[str, Project]:
    alice, bob = users("alice", "bob")
    roadmap = a_board(owner=alice, name="Roadmap", members={bob: "developer"})
    secret = a_board(owner=alice, name="Secret")
    return {"roadmap": roadmap, "secret": secret}


@pytest.fixture
def worker(request: pytest.FixtureRequest, boards: dict[str, Project]) -> Any:
    """A live worker; with ``REDIS_URL``, on one Redis layer with this process, so a write
    here reaches it as a write on another worker would."""
    if not redis_reachable():
        yield request.getfixturevalue("live_server"), False
        return
    env = request.getfixturevalue("redis_layer")
    with LiveServer.start(env=env) as server:
        yield server, True


class Heard:
    """The resource URIs the server said were updated, as they come."""

    def __init__(self) -> None:
        self.updates: asyncio.Queue[tuple[str, float]] = asyncio.Queue()

    async def __call__(self, message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            await self.updates.put((str(root.params.uri), time.monotonic()))

    async def next(self, timeout: float) -> tuple[str, float] | None:
        try:
            return await asyncio.wait_for(self.updates.get(), timeout)
        except TimeoutError:
            return None


async def session(server: LiveServer, token: str, heard: Heard) -> tuple[Any, Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    client = Client(
        streamable_http_client(f"{server.url}/mcp", http_client=http),
        mode="legacy",
        message_handler=heard,
    )
    return http, client


def rest_put(server: LiveServer, token: str, project: Project, key: str, value: Any) -> None:
    request = urllib.request.Request(
        f"{server.url}/api/v1/projects/{project.id}/kv/{key}",
        data=json.dumps({"value": value}).encode(),
        method="PUT",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200


async def test_a_subscribed_agent_hears_a_change_made_through_rest_or_another_process(
    boards: dict[str, Project], worker: tuple[LiveServer, bool]
) -> None:
    live_server, on_redis = worker
    roadmap = boards["roadmap"]
    board_uri = f"kanban://boards/{roadmap.id}"
    agent = await token_for("bob", "--project", str(roadmap.id), "--scope", "read")
    person = await token_for("alice", "--project", str(roadmap.id))
    heard = Heard()
    http, client = await session(live_server, agent, heard)
    async with http, client:
        capabilities = client.server_capabilities
        assert capabilities is not None and capabilities.resources is not None
        assert capabilities.resources.subscribe is True
        await client.subscribe_resource(board_uri)
        await asyncio.sleep(0.3)  # the session's stream of notifications opens

        changed = time.monotonic()
        await sync_to_async(rest_put)(live_server, person, roadmap, "card:note", {"t": 1})
        got = await heard.next(timeout=5)
        assert got is not None and got[0] == board_uri
        assert got[1] - changed < WITHIN, f"heard after {got[1] - changed:.2f} s"

        if on_redis:
            # This process publishes to Redis as another worker would.
            changed = time.monotonic()
            await sync_to_async(project_kv_set)(
                target=Target(user=await _alice(), project_id=roadmap.id),
                key="card:other",
                value={"t": 2},
                provenance=Provenance(via="cli"),
            )
            got = await heard.next(timeout=5)
            assert got is not None and got[0] == board_uri
        assert got[1] - changed < WITHIN, f"heard after {got[1] - changed:.2f} s"

        await client.unsubscribe_resource(board_uri)
        await sync_to_async(rest_put)(live_server, person, roadmap, "card:note", {"t": 3})
        assert await heard.next(timeout=1.5) is None


@sync_to_async
def _alice() -> Any:
    from django.contrib.auth.models import User

    return User.objects.get(username="alice")


async def test_a_token_without_read_on_a_board_cannot_subscribe_to_it(
    boards: dict[str, Project], live_server: LiveServer
) -> None:
    roadmap, secret = boards["roadmap"], boards["secret"]
    agent = await token_for("bob", "--project", str(roadmap.id))
    heard = Heard()
    http, client = await session(live_server, agent, heard)
    async with http, client:
        for uri in (f"kanban://boards/{secret.id}", f"kanban://boards/{secret.id}/cards"):
            with pytest.raises(MCPError) as refused:
                await client.subscribe_resource(uri)
            assert refused.value.code == -32002


async def test_behind_the_deployed_nginx_a_session_stays_on_its_worker_and_hears_the_others(
    boards: dict[str, Project], request: pytest.FixtureRequest
) -> None:
    """deploy/nginx.conf in front of two workers on Redis: every request of the agent's
    session reaches the worker that made it (else 404 and no notifications), and a change
    made on either worker reaches it."""
    if not redis_reachable():
        pytest.skip("needs Redis (REDIS_URL), as the production topology does")
    if not os.access(NGINX, os.X_OK):
        if os.environ.get("KANBAN_REQUIRE_NGINX") == "1":
            pytest.fail("KANBAN_REQUIRE_NGINX=1 but nginx is not installed")
        pytest.skip("needs nginx (apt-get install nginx)")
    roadmap = boards["roadmap"]
    board_uri = f"kanban://boards/{roadmap.id}"
    agent = await token_for("bob", "--project", str(roadmap.id), "--scope", "read")
    person = await token_for("alice", "--project", str(roadmap.id))
    env = request.getfixturevalue("redis_layer")
    servers = await sync_to_async(start_live_servers)(2, env=env)
    try:
        with nginx_in_front_of([server.port for server in servers]) as proxy:
            front = LiveServer(servers[0].process, proxy.port, servers[0].log_path)
            heard = Heard()
            http, client = await session(front, agent, heard)
            async with http, client:
                await client.subscribe_resource(board_uri)
                for _ in range(3):  # each of its requests finds the session
                    assert (await client.read_resource(board_uri)).contents
                await asyncio.sleep(0.3)
                for n, server in enumerate(servers):
                    changed = time.monotonic()
                    await sync_to_async(rest_put)(server, person, roadmap, "card:n", {"n": n})
                    got = await heard.next(timeout=5)
                    assert got is not None and got[0] == board_uri, server
                    assert got[1] - changed < WITHIN
    finally:
        for server in servers:
            server.stop()
