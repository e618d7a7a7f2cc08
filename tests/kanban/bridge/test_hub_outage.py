"""The hub survives a channel layer that fails or restarts empty: writes keep committing
elsewhere, and once the layer is back the hub rejoins its groups and tells every surviving
subscription to re-read (``revision: "resync"``), after re-checking its access."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any
from uuid import UUID, uuid4

import pytest

from kanban.access.grant_rules import Rule
from kanban.bridge import hub as hub_module
from kanban.bridge import publish
from kanban.bridge.frames import Change
from kanban.bridge.hub import Hub, ReadRules, Subscription, project_group

ALL = Rule("all")


class FlakyLayer:
    """A cross-process layer stand-in: it can be down, and it can restart empty."""

    def __init__(self) -> None:
        self.down = False
        self.groups: dict[str, set[str]] = defaultdict(set)
        self.queues: dict[str, asyncio.Queue[dict[str, Any]]] = defaultdict(asyncio.Queue)

    def _check(self) -> None:
        if self.down:
            raise ConnectionError("layer down")

    def restart_empty(self) -> None:
        self.groups.clear()
        self.queues.clear()

    async def new_channel(self, prefix: str) -> str:
        return prefix + uuid4().hex

    async def group_add(self, group: str, channel: str) -> None:
        self._check()
        self.groups[group].add(channel)

    async def group_discard(self, group: str, channel: str) -> None:
        self._check()
        self.groups[group].discard(channel)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self._check()
        for channel in self.groups.get(group, ()):
            self.queues[channel].put_nowait(message)

    async def receive(self, channel: str) -> dict[str, Any]:
        self._check()
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation
        # that races its timeout, and the hub's listener would then never stop.
        try:
            async with asyncio.timeout(0.05):
                return await self.queues[channel].get()
        except TimeoutError:
            self._check()
            return {"type": "nothing"}


class FakeSocket:
    def __init__(self, hub: Hub, allowed: bool = True) -> None:
        self.hub, self.allowed = hub, allowed
        self.user_id = 1
        self.consumer_id = uuid4()
        self.sent: list[str] = []
        self.rechecks = 0

    async def send_text(self, text: str) -> None:
        self.sent.append(text)

    def write_frame(self, frame: bytes) -> bool:
        return False

    def backlog(self) -> int:
        return 0

    async def recheck(self, subscriptions: Sequence[Subscription]) -> None:
        self.rechecks += 1
        for sub in subscriptions:
            await self.hub.release(sub, ReadRules(ALL, ALL) if self.allowed else None)


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    # No database here: a board joining the hub has no plugin version to look up.
    async def no_versions(**_: Any) -> dict[UUID, str]:
        return {}

    monkeypatch.setattr(hub_module, "database_sync_to_async", lambda _: no_versions)
    monkeypatch.setattr(hub_module, "HEARTBEAT_SECONDS", 0.02)
    monkeypatch.setattr(hub_module, "HEARTBEAT_TIMEOUT", 0.2)
    monkeypatch.setattr(hub_module, "RECOVER_RETRY_SECONDS", 0.02)


async def started_hub(layer: FlakyLayer) -> Hub:
    hub = Hub()
    hub.layer = layer
    return hub


async def wait_for(condition: Any, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def subscribed(hub: Hub, socket: FakeSocket, target: UUID) -> Subscription:
    await hub.add_socket(socket)
    sub = Subscription(socket, "inventory", target, ALL, ALL)
    await hub.subscribe(sub)
    return sub


async def stop(hub: Hub) -> None:
    for task in hub._tasks:
        task.cancel()
    async with asyncio.timeout(10):  # a task that ignores cancellation fails, not hangs
        await asyncio.gather(*hub._tasks, return_exceptions=True)


async def test_a_layer_that_restarts_empty_is_noticed_rejoined_and_resynced(fast: None) -> None:
    layer = FlakyLayer()
    hub = await started_hub(layer)
    socket, target = FakeSocket(hub), uuid4()
    await subscribed(hub, socket, target)
    try:
        layer.restart_empty()  # no call fails: only the missing heartbeat can tell
        await wait_for(lambda: any('"resync"' in text for text in socket.sent))
        assert hub.recoveries == 1 and hub.layer_ok
        assert socket.rechecks == 1, "access changes may have been lost too"
        assert hub.channel in layer.groups[project_group(target)]
        assert socket.sent == [
            '{"v": 1, "event": "revision", "alias": "inventory", "revision": "resync"}'
        ]
        # The ordinary path works again.
        await layer.group_send(
            project_group(target),
            {"type": "kv.changed", "project": str(target), "changes": [["kv", "a", "7"]]},
        )
        await wait_for(lambda: len(socket.sent) == 2)
        assert '"revision": "7"' in socket.sent[1]
    finally:
        await stop(hub)


async def test_subscribing_while_the_layer_is_down_succeeds_and_resyncs_when_it_returns(
    fast: None,
) -> None:
    layer = FlakyLayer()
    hub = await started_hub(layer)
    await hub.add_socket(FakeSocket(hub))  # the hub is running before the outage
    layer.down = True
    socket, target = FakeSocket(hub), uuid4()
    try:
        await subscribed(hub, socket, target)  # must not raise: the socket stays usable
        await wait_for(lambda: not hub.layer_ok)
        layer.down = False
        layer.restart_empty()
        await wait_for(lambda: bool(socket.sent))
        assert hub.channel in layer.groups[project_group(target)]
        assert '"resync"' in socket.sent[0]
    finally:
        await stop(hub)


async def test_a_subscription_revoked_during_the_outage_is_dropped_not_resynced(
    fast: None,
) -> None:
    layer = FlakyLayer()
    hub = await started_hub(layer)
    socket, target = FakeSocket(hub), uuid4()
    await subscribed(hub, socket, target)
    try:
        layer.down = True
        await wait_for(lambda: not hub.layer_ok)
        socket.allowed = False  # the access.changed message was lost with the layer
        layer.down = False
        await wait_for(lambda: hub.recoveries == 1 and socket.rechecks == 1)
        assert socket.sent == []
        assert target not in hub.by_target
    finally:
        await stop(hub)


class SlowLeavingLayer(FlakyLayer):
    """Redis as a pool of connections makes it: a leave sent first may land after a join."""

    async def group_discard(self, group: str, channel: str) -> None:
        await asyncio.sleep(0.05)
        await super().group_discard(group, channel)


async def test_a_subscription_that_comes_while_the_last_one_leaves_keeps_the_hub_in_the_group(
    fast: None,
) -> None:
    layer = SlowLeavingLayer()
    hub = await started_hub(layer)
    target = uuid4()
    leaving, coming = FakeSocket(hub), FakeSocket(hub)
    last = await subscribed(hub, leaving, target)
    await hub.add_socket(coming)
    try:
        # The last subscriber leaves and, its leave still in flight, another subscribes.
        await asyncio.gather(
            hub.unsubscribe(last),
            hub.subscribe(Subscription(coming, "inventory", target, ALL, ALL)),
        )
        assert hub.channel in layer.groups[project_group(target)], "still hears the target"
    finally:
        await stop(hub)


async def test_a_loop_too_busy_to_hear_the_heartbeat_is_not_a_lost_layer(fast: None) -> None:
    """A worker whose loop is saturated (many boards loading at once) hears its beats late;
    taking that for a lost layer resyncs every socket, and their reloads keep the loop
    saturated. Only beats missing while the loop keeps up mean the layer is gone."""
    layer = FlakyLayer()
    hub = await started_hub(layer)
    socket, target = FakeSocket(hub), uuid4()
    await subscribed(hub, socket, target)
    try:
        for _ in range(5):
            time.sleep(0.3)  # the loop blocked past the heartbeat timeout, five times over
            await asyncio.sleep(0.05)
        assert hub.layer_ok and hub.recoveries == 0 and socket.sent == []
        layer.restart_empty()  # and a real loss is still noticed once the loop keeps up
        await wait_for(lambda: any('"resync"' in text for text in socket.sent))
        assert hub.recoveries == 1
    finally:
        await stop(hub)


class RefusingLayer(FlakyLayer):
    """Refuses the next ``refuse`` change events and nothing else: a blip no hub call saw."""

    refuse = 0

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        if message["type"] == "kv.changed" and self.refuse:
            self.refuse -= 1
            raise ConnectionError("connection reset")
        await super().group_send(group, message)


async def test_a_change_whose_publish_failed_reaches_every_workers_subscribers_as_a_resync(
    fast: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write committed but the layer refused its event (a Redis blip that no hub call
    saw): the publisher keeps it, and once the layer answers, the hub of the process sends
    it as a resync of that project to every worker, watchers and subscribers alike."""
    layer = RefusingLayer()
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    here, there = await started_hub(layer), await started_hub(layer)
    target = uuid4()
    subscriber, watcher = FakeSocket(here), FakeSocket(there)
    await subscribed(here, subscriber, target)
    await there.add_socket(watcher)
    await there.subscribe(Subscription(watcher, "inventory", target, ALL, ALL, watch=True))
    try:
        layer.refuse = 1
        await asyncio.to_thread(publish.publish_changes, target, [Change("kv", "card:1", "8")])
        await wait_for(lambda: bool(subscriber.sent) and bool(watcher.sent))
        assert subscriber.sent[-1] == (
            '{"v": 1, "event": "revision", "alias": "inventory", "revision": "resync"}'
        )
        assert '"resync":true' in watcher.sent[-1]
        assert hub_module._take_undelivered() == []
        assert here.recoveries == there.recoveries == 0, "no hub saw the layer fail"
    finally:
        await stop(here)
        await stop(there)
        hub_module._take_undelivered()
