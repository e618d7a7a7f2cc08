"""A socket whose peer stops reading is held back, then told to resync: the worker does not
keep every event for it, and the page does not stay silently behind. In-process with sockets
that report their backlog, the hub's held events collapsing likewise, and on a real daphne
worker with a peer that stops reading while writes flood."""

from __future__ import annotations

import asyncio
import json
import socket as sockets
from collections.abc import Callable
from typing import Any
from uuid import UUID, uuid4

import pytest
from django.test import override_settings

from kanban.bridge import backpressure, subscription
from kanban.bridge import hub as hub_module
from kanban.bridge.frames import Change
from kanban.bridge.hub import Hub, Subscription
from kanban.bridge.overflow import RESYNC_CHANGE
from tests.kanban.bridge.test_hub_outage import ALL, FakeSocket, stop, wait_for
from tests.kanban.bridge.test_overload import METRICS_TOKEN, LiveViewer, metric
from tests.kanban.bridge.test_scale_out import open_socket, scene
from tests.live import LiveServer, open_board_socket

__all__ = ["scene"]  # a fixture here too

BOUND = 1000


class SlowPeer(FakeSocket):
    """A socket whose peer has ``unread`` bytes it has not taken yet."""

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.unread = 0

    def backlog(self) -> int:
        return self.unread


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_versions(**_: Any) -> dict[UUID, str]:
        return {}

    monkeypatch.setattr(hub_module, "database_sync_to_async", lambda _: no_versions)
    monkeypatch.setattr(backpressure, "DRAIN_POLL_SECONDS", 0.01)


def a_change(n: int) -> Change:
    return Change("kv", f"stock:{n}", f"r{n}", json.dumps(n))


@override_settings(KANBAN_SOCKET_BUFFER_BYTES=BOUND)
async def test_a_peer_past_the_bound_skips_events_then_each_subscription_resyncs_once(
    quick: None,
) -> None:
    hub, target = Hub(), uuid4()
    slow, steady = SlowPeer(hub), SlowPeer(hub)
    for peer in (slow, steady):
        await hub.add_socket(peer)
        await hub.subscribe(Subscription(peer, "inventory", target, ALL, ALL, watch=True))
        await hub.subscribe(Subscription(peer, "inventory", target, ALL, ALL))
    try:
        await hub._deliver(target, [a_change(1)])
        assert len(slow.sent) == len(steady.sent) == 2
        slow.unread = BOUND + 1
        for n in range(2, 6):
            await hub._deliver(target, [a_change(n)])
        assert len(slow.sent) == 2, "nothing more for a peer that does not read"
        assert len(steady.sent) == 10
        assert hub.slow.overflows == 1
        slow.unread = BOUND // 2
        await asyncio.sleep(0.05)
        assert len(slow.sent) == 2, "held back until all but a quarter is read"
        slow.unread = BOUND // 4
        await wait_for(lambda: len(slow.sent) == 4)
        told = sorted((json.loads(text) for text in slow.sent[2:]), key=lambda e: e["event"])
        assert [e["event"] for e in told] == ["changes", "revision"]
        assert (told[0]["changes"], told[0]["resync"]) == ([], True)
        assert told[1]["revision"] == "resync"
        await hub._deliver(target, [a_change(6)])
        assert len(slow.sent) == 6, "events flow again"
        assert not hub.slow.behind
    finally:
        await stop(hub)


@override_settings(KANBAN_SOCKET_BUFFER_BYTES=BOUND)
async def test_a_socket_closed_while_held_back_is_forgotten(quick: None) -> None:
    hub, target = Hub(), uuid4()
    slow = SlowPeer(hub)
    await hub.add_socket(slow)
    await hub.subscribe(Subscription(slow, "inventory", target, ALL, ALL, watch=True))
    try:
        slow.unread = BOUND + 1
        await hub._deliver(target, [a_change(1)])
        assert slow in hub.slow.behind
        await hub.remove_socket(slow)
        assert not hub.slow.behind
    finally:
        await stop(hub)


def test_events_held_past_the_bound_collapse_into_one_resync() -> None:
    sub = Subscription(FakeSocket(Hub()), "inventory", uuid4(), ALL, ALL, watch=True)
    sub.held = []
    for n in range(subscription.MAX_HELD):
        assert subscription.event_texts([sub], [a_change(n)]) == []
    assert len(sub.held) == subscription.MAX_HELD
    subscription.event_texts([sub], [a_change(-1)])
    assert sub.held == [RESYNC_CHANGE]


# -- a real worker, a peer that stops reading --------------------------------------------

LIVE_BOUND = 32 * 1024
LIVE_WRITES = 300


def a_small_window(server: LiveServer) -> sockets.socket:
    """A client socket that asks for little at a time, so what it leaves unread stays in
    the worker rather than in the kernel's buffers."""
    host, port = server.url.removeprefix("http://").split(":")
    raw = sockets.socket(sockets.AF_INET, sockets.SOCK_STREAM)
    raw.setsockopt(sockets.SOL_SOCKET, sockets.SO_RCVBUF, 4096)
    raw.connect((host, int(port)))
    raw.setblocking(False)
    return raw


@pytest.mark.long
async def test_a_peer_that_stops_reading_is_held_back_and_then_resyncs_on_a_live_worker(
    live_servers: Callable[..., list[LiveServer]], scene: dict[str, Any]
) -> None:
    (server,) = live_servers(
        1,
        env={
            "KANBAN_SOCKET_BUFFER_BYTES": str(LIVE_BOUND),
            "KANBAN_METRICS_TOKEN": METRICS_TOKEN,
        },
    )
    # It reads nothing while the flood lasts: websockets stops taking from the kernel once
    # a few messages wait, and the small window leaves the rest with the worker.
    slow = LiveViewer(
        await open_board_socket(
            server,
            scene["board"].id,
            scene["cookie"],
            sock=a_small_window(server),
            ping_interval=None,
            max_queue=2,
        )
    )
    writer = LiveViewer(await open_socket(server, scene))
    try:
        await slow.call("watch", alias="inventory", value={"prefix": "stock:"})
        slow.values = await slow.read_all()
        padding = "x" * 12000  # a pushed value each, so the flood is bytes, not only events
        for n in range(LIVE_WRITES):
            await writer.call("set", alias="inventory", key=f"stock:{n % 12}", value=[n, padding])
        expected = await writer.read_all()
        assert metric(server, "kanban_bridge_slow_sockets_total") >= 1
        await slow.drain(quiet=3.0)
        assert slow.resyncs >= 1, "a peer held back is told to resync"
        assert slow.values == expected, "and ends with what the store holds"
    finally:
        for client in (slow, writer):
            await client.socket.close()
