"""An operator scrapes each worker's /metrics: open sockets, frames by op and outcome, and
write -> delivered latency, under load, across two workers (on one Redis when there is one);
only with the metrics token, and never through the public proxy's configuration."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings as django_settings
from django.db import connection
from django.test import Client

from tests.factories import a_project, a_user
from tests.kanban.bridge.test_scale_out import redis_reachable
from tests.live import LiveServer, open_board_socket

pytestmark = pytest.mark.django_db(transaction=True)

TOKEN = "metrics-" + "s3cret" * 4


def scrape(server: LiveServer, token: str | None = TOKEN) -> tuple[int, str]:
    request = urllib.request.Request(f"{server.url}/metrics")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


def sample(text: str, name: str) -> float:
    """The sum of every series of metric ``name`` in a scrape."""
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(name) and not line.startswith("#") and line[len(name)] in " {"
    )


async def test_two_workers_under_load_show_their_sockets_frames_and_delivery_latency(
    live_servers: Callable[..., list[LiveServer]], settings: Any
) -> None:
    env: dict[str, str] = {"KANBAN_METRICS_TOKEN": TOKEN}
    workers = 2 if redis_reachable() else 1
    if workers == 2:
        from tests.kanban.bridge.test_scale_out import REDIS_URL

        env |= {"REDIS_URL": REDIS_URL, "KANBAN_REDIS_PREFIX": f"metrics-{id(env)}"}
    servers = await sync_to_async(live_servers)(workers, env=env)

    def scene() -> tuple[Any, str]:
        alice = a_user("alice")
        board = a_project(name="Board", members={alice: "developer"})
        client = Client()
        client.force_login(alice)
        name = django_settings.SESSION_COOKIE_NAME
        return board, f"{name}={client.cookies[name].value}"

    board, cookie = await sync_to_async(scene)()
    # Nobody reads the events; an unbounded queue keeps the close handshake from waiting
    # behind them for websockets' close_timeout.
    sockets = [
        await open_board_socket(s, board.id, cookie, max_queue=None)
        for s in servers
        for _ in range(5)
    ]
    for socket in sockets:
        await socket.send(json.dumps({"v": 1, "id": 1, "op": "watch"}))
        await socket.recv()
    writer = sockets[0]
    for n in range(20):  # writes through worker 1 reach the watchers on every worker
        await writer.send(
            json.dumps({"v": 1, "id": 100 + n, "op": "set", "key": f"k{n}", "value": n})
        )
    await writer.send(json.dumps({"v": 1, "id": 999, "op": "nonsense"}))
    await asyncio.sleep(1.5)

    for server in servers:
        status, text = await asyncio.to_thread(scrape, server)
        assert status == 200, status
        assert sample(text, "kanban_bridge_sockets") == 5
        assert sample(text, "kanban_write_delivered_seconds_count") >= 20
        assert sample(text, "kanban_hub_fanout_sockets_count") >= 20
        if connection.vendor == "postgresql":  # the watches were decided on the loop's pool
            assert sample(text, "kanban_db_loop_pool_connections") >= 1
    first = (await asyncio.to_thread(scrape, servers[0]))[1]
    assert 'kanban_bridge_frames_total{op="set",outcome="ok"} 20.0' in first
    assert 'kanban_bridge_frames_total{op="invalid",outcome="invalid_argument"} 1.0' in first
    assert (await asyncio.to_thread(scrape, servers[0], "wrong"))[0] == 403
    assert (await asyncio.to_thread(scrape, servers[0], None))[0] == 403
    await asyncio.gather(*(socket.close() for socket in sockets))


def test_without_a_token_set_there_are_no_metrics(client: Client, settings: Any) -> None:
    settings.KANBAN_METRICS_TOKEN = ""
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer anything").status_code == 404
    settings.KANBAN_METRICS_TOKEN = TOKEN
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200


def test_the_public_proxy_never_routes_metrics() -> None:
    conf = (Path(django_settings.BASE_DIR) / "deploy" / "nginx.conf").read_text()
    assert "location = /metrics {\n        return 404;" in conf


def test_a_production_worker_answers_prometheus_over_plain_http_with_the_token_only(
    live_servers: Callable[..., list[LiveServer]],
) -> None:
    """Prometheus scrapes each worker on the private network over plain HTTP, as the README
    says; a production worker sent it to https (301) like any page, so nothing was scraped.
    Only the token opens it, and through the public proxy it stays refused (as the
    production-topology scenario checks)."""
    production = {
        "KANBAN_MODE": "production",
        "SECRET_KEY": "metrics-" + "x" * 60,
        "ALLOWED_HOSTS": "127.0.0.1",
        "KANBAN_DEMO_DATA": "0",
        "KANBAN_METRICS_TOKEN": TOKEN,
    }
    (worker,) = live_servers(1, env=production)

    status, text = scrape(worker)
    assert status == 200 and "kanban_bridge_sockets" in text
    assert scrape(worker, None)[0] == 403
    assert scrape(worker, "wrong")[0] == 403


def test_every_metric_is_served_from_the_workers_own_registry_and_none_from_the_default() -> None:
    import prometheus_client

    from kanban.observability import metrics

    made = [
        value
        for value in vars(metrics).values()
        if isinstance(value, prometheus_client.metrics.MetricWrapperBase)
    ]
    served = {family.name for family in metrics.REGISTRY.collect()}
    elsewhere = {family.name for family in prometheus_client.REGISTRY.collect()}
    assert len(made) == len(served) > 10
    assert not {name for name in elsewhere if name.startswith("kanban_")}
