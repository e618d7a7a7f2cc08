"""Overload loses nothing silently: when a channel is too full to take a change, every
subscriber that missed it is told to resync (watches ``resync: true``), and a viewer that
re-reads on resync ends with what the store holds. Numbers, in-process on the in-memory
layer, and on PostgreSQL + Redis with two workers, one of them stopped while writes flood
past a small ``capacity``.

The full-size flood: ``KANBAN_OVERLOAD_WRITES=5000 KANBAN_OVERLOAD_VIEWERS=50`` with the
Redis pass's environment (README, Operations)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import urllib.request
import uuid
from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID, uuid4

import pytest
from channels.layers import InMemoryChannelLayer
from websockets.asyncio.client import ClientConnection

from kanban.bridge import hub as hub_module
from kanban.bridge import overflow, publish
from kanban.bridge.frames import Change
from kanban.bridge.hub import Hub, Subscription
from tests.kanban.bridge.test_hub_outage import ALL, FakeSocket, stop, wait_for
from tests.kanban.bridge.test_scale_out import REDIS_URL, open_socket, redis_reachable, scene
from tests.live import LiveServer, open_board_socket

__all__ = ["scene"]  # the two-worker scene of test_scale_out, a fixture here too


def a_message(origin: str, seq: int, prev: float | None = None) -> dict[str, Any]:
    return {"origin": origin, "seq": seq, "prev": prev}


# -- the numbers a hub hears -------------------------------------------------------------


def test_a_number_skipped_and_not_heard_in_time_resyncs_its_project() -> None:
    gaps, target = overflow.Gaps(), uuid4()
    gaps.join(target, at=100.0)
    assert not gaps.heard(target, a_message("a", 1), now=0.0)
    assert not gaps.heard(target, a_message("a", 3), now=0.0)  # 2 may only be late
    assert gaps.overdue(now=0.5) == set()
    assert gaps.overdue(now=overflow.GAP_GRACE_SECONDS) == {target}
    assert not gaps.pending(), "the resync covers it"


def test_a_number_heard_late_but_within_the_grace_is_no_loss() -> None:
    gaps, target = overflow.Gaps(), uuid4()
    gaps.join(target, at=100.0)
    for seq in (1, 3, 2, 4):  # two threads of one publisher sent 2 and 3 out of order
        assert not gaps.heard(target, a_message("a", seq), now=0.0)
    assert gaps.overdue(now=10.0) == set()
    assert not gaps.pending(), "nothing left to wait for"


def test_a_first_message_whose_previous_came_after_the_join_reveals_that_one_lost() -> None:
    gaps, target = overflow.Gaps(), uuid4()
    gaps.join(target, at=100.0)
    gaps.heard(target, a_message("a", 7, prev=99.0), now=0.0)  # 6 came before the join
    assert gaps.overdue(now=10.0) == set()
    gaps.heard(target, a_message("b", 4, prev=101.0), now=0.0)  # 3 came after: lost
    assert gaps.overdue(now=10.0) == {target}


def test_a_jump_of_many_numbers_resyncs_at_once_and_a_duplicate_is_no_gap() -> None:
    gaps, target = overflow.Gaps(), uuid4()
    gaps.join(target, at=100.0)
    gaps.heard(target, a_message("a", 1), now=0.0)
    assert gaps.heard(target, a_message("a", overflow.MAX_MISSING + 10), now=0.0)
    assert not gaps.heard(target, a_message("a", 1), now=0.0), "a kept message sent again"
    assert not gaps.pending()


def test_numbers_of_a_project_not_followed_are_ignored_and_a_leave_forgets() -> None:
    gaps, target = overflow.Gaps(), uuid4()
    assert not gaps.heard(target, a_message("a", 5, prev=1e12), now=0.0)
    gaps.join(target, at=100.0)
    gaps.heard(target, a_message("a", 1), now=0.0)
    gaps.heard(target, a_message("a", 3), now=0.0)
    gaps.leave(target)
    assert not gaps.pending()


def test_each_publisher_numbers_each_group_on_its_own_and_says_when_it_last_sent() -> None:
    group = f"kanban.kv.{uuid4()}"
    first, second = overflow.stamp(group, 1.0), overflow.stamp(group, 2.0)
    other = overflow.stamp(f"kanban.kv.{uuid4()}", 3.0)
    assert (first["seq"], first["prev"]) == (1, None)
    assert (second["seq"], second["prev"]) == (2, 1.0)
    assert (other["seq"], other["prev"]) == (1, None)
    assert first["origin"] == second["origin"] == other["origin"]


# -- in-process, on the in-memory layer ---------------------------------------------------


class Viewer:
    """A watcher as the Board is one: it applies each change's value, and on ``resync``
    re-reads everything (here, the store as it is at that moment)."""

    def __init__(self, socket: FakeSocket, store: dict[str, str]) -> None:
        self.socket, self.store, self.seen = socket, store, 0
        self.values: dict[str, str] = {}
        self.resyncs = 0

    def catch_up(self) -> None:
        for text in self.socket.sent[self.seen :]:
            event = json.loads(text)
            if event.get("resync"):
                self.resyncs += 1
                self.values = dict(self.store)
            for change in event.get("changes", ()):
                self.values[change["key"]] = json.dumps(change["value"])
        self.seen = len(self.socket.sent)


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_versions(**_: Any) -> dict[UUID, str]:
        return {}

    monkeypatch.setattr(hub_module, "database_sync_to_async", lambda _: no_versions)
    monkeypatch.setattr(hub_module, "PLUGIN_POLL_SECONDS", 0.05)
    monkeypatch.setattr(overflow, "GAP_GRACE_SECONDS", 0.1)


async def watching_hub(
    layer: InMemoryChannelLayer, target: UUID, viewers: int, store: dict[str, str]
) -> tuple[Hub, list[Viewer]]:
    hub = Hub()
    hub.layer = layer
    watchers = []
    for _ in range(viewers):
        socket = FakeSocket(hub)
        await hub.add_socket(socket)
        await hub.subscribe(Subscription(socket, "inventory", target, ALL, ALL, watch=True))
        watchers.append(Viewer(socket, store))
    return hub, watchers


def write(store: dict[str, str], target: UUID, key: str, value: int) -> None:
    """A committed write as the wiring publishes it."""
    store[key] = json.dumps(value)
    revision = str(time.monotonic_ns())
    publish.publish_changes(target, [Change("kv", key, revision, json.dumps(value))])


async def settled(viewers: Sequence[Viewer], store: dict[str, str]) -> None:
    def converged() -> bool:
        for viewer in viewers:
            viewer.catch_up()
        return all(viewer.values == store for viewer in viewers)

    await wait_for(converged)


async def test_a_flood_past_the_in_memory_capacity_ends_in_a_resync_never_silently_behind(
    quick: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    layer = InMemoryChannelLayer(capacity=5)
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    target, store = uuid4(), {}  # type: UUID, dict[str, str]
    hub, viewers = await watching_hub(layer, target, 3, store)
    try:
        # The publishes queue on this loop ahead of the hub's listener: the channel fills
        # at five and the rest are skipped, the last ones too.
        for n in range(60):
            write(store, target, f"stock:{n % 7}", n)
        await settled(viewers, store)
        assert all(viewer.resyncs >= 1 for viewer in viewers)
    finally:
        await stop(hub)
        overflow.take_undelivered()


class LossyLayer(InMemoryChannelLayer):
    """Drops chosen change messages without a word, as an expiry or a buffer would."""

    def __init__(self, lose: set[int]) -> None:
        super().__init__(capacity=1000)
        self.lose = lose

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        if message.get("type") == "kv.changed" and message.get("seq") in self.lose:
            return
        await super().send(channel, message)


async def test_a_change_lost_anywhere_on_the_way_shows_as_a_gap_and_resyncs(
    quick: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    layer = LossyLayer(lose={3, 4})
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    target, store = uuid4(), {}  # type: UUID, dict[str, str]
    hub, viewers = await watching_hub(layer, target, 2, store)
    try:
        for n in range(6):
            write(store, target, f"stock:{n}", n)
            await asyncio.sleep(0.01)
        await settled(viewers, store)
        assert [viewer.resyncs for viewer in viewers] == [1, 1]
        assert hub.overflows == 1
    finally:
        await stop(hub)


# -- PostgreSQL + Redis, two workers ----------------------------------------------------

WRITES = int(os.environ.get("KANBAN_OVERLOAD_WRITES", "120"))
VIEWERS = int(os.environ.get("KANBAN_OVERLOAD_VIEWERS", "4"))  # per worker
KEYS = 12
CAPACITY = 3


@pytest.fixture
def small_redis_layer(settings: Any) -> dict[str, str]:
    if not redis_reachable():
        pytest.skip(f"needs Redis at {REDIS_URL} (REDIS_URL set)")
    prefix = f"overload-{uuid.uuid4().hex[:8]}"
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": 30}],
                "prefix": prefix,
                "capacity": CAPACITY,
            },
        }
    }
    return {
        "REDIS_URL": REDIS_URL,
        "KANBAN_REDIS_PREFIX": prefix,
        "KANBAN_LAYER_CAPACITY": str(CAPACITY),
        "KANBAN_METRICS_TOKEN": METRICS_TOKEN,
    }


METRICS_TOKEN = "overload-test"


def metric(server: LiveServer, name: str) -> float:
    """A counter of ``server``'s /metrics (the worker's ``KANBAN_METRICS_TOKEN`` is
    ``METRICS_TOKEN``); 0 before it first counts."""
    request = urllib.request.Request(
        f"{server.url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return 0.0


async def joined(layer: Any, group: str, prefix: str) -> str:
    """A new channel of ``layer``, named from ``prefix``, that is a member of ``group``."""
    channel = await layer.new_channel(prefix)
    await layer.group_add(group, channel)
    return channel


async def fill(layer: Any, channel: str, count: int) -> None:
    for n in range(count):
        await layer.send(channel, {"type": "filler", "n": n})


@pytest.mark.redis
async def test_the_layer_seam_records_the_group_a_full_channel_missed(
    small_redis_layer: dict[str, str],
) -> None:
    """channels_redis's group send, as overflow.py runs it: a channel at capacity takes
    nothing more, and the group it missed is recorded beside it, for its hub to read."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    full = await joined(layer, "kanban.kv.g", "kanban.hub.")
    free = await joined(layer, "kanban.kv.g", "other.")
    await fill(layer, full, CAPACITY)
    try:
        skipped = await overflow.group_send_counting(layer, "kanban.kv.g", {"type": "x"})
        assert skipped == 1
        assert await overflow.take_dropped(layer, full) == {"kanban.kv.g"}
        assert await overflow.take_dropped(layer, full) == set(), "read once"
        assert await overflow.take_dropped(layer, free) == set()
        assert (await layer.receive(free))["type"] == "x"
    finally:
        await layer.flush()


@pytest.mark.redis
async def test_messages_sent_together_arrive_in_order_and_a_full_channel_takes_the_first(
    small_redis_layer: dict[str, str],
) -> None:
    """What a busy group's sender queued goes in one send (publish._Outbox): each member
    channel gives the messages out in the order sent, and one with room for only some
    takes the first of them and records the group for the rest."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    roomy = await joined(layer, "kanban.kv.g", "kanban.hub.")
    tight = await joined(layer, "kanban.kv.g", "other.")
    await fill(layer, tight, 1)
    sent = [{"type": "x", "n": n} for n in range(CAPACITY)]
    try:
        skipped = await overflow.group_send_counting(layer, "kanban.kv.g", *sent)
        assert skipped == 1, "the tight channel had room for two of three"
        assert [(await layer.receive(roomy))["n"] for _ in range(CAPACITY)] == [0, 1, 2]
        assert (await layer.receive(tight))["type"] == "filler"
        assert [(await layer.receive(tight))["n"] for _ in range(CAPACITY - 1)] == [0, 1]
        assert await overflow.take_dropped(layer, tight) == {"kanban.kv.g"}
        assert await overflow.take_dropped(layer, roomy) == set()
    finally:
        await layer.flush()


@pytest.mark.redis
async def test_the_layer_seam_drops_what_expired_before_it_counts_or_sends(
    small_redis_layer: dict[str, str],
) -> None:
    """As channels_redis's own group send: a channel's expired messages make room before
    its capacity is counted, and a member that stopped renewing its place in the group is
    taken out of it and sent nothing (overflow.py does both inside its scripts)."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    full = await joined(layer, "kanban.kv.g", "kanban.hub.")
    gone = await joined(layer, "kanban.kv.stale", "gone.")
    await fill(layer, full, CAPACITY)
    redis = layer.connection(0)
    gone_key = layer.prefix + layer.non_local_name(gone)
    try:
        # Two seconds on, both layer settings shortened to one (in whole seconds): the
        # fillers and the stale member are past them, the fillers' key is not (its EXPIRE
        # was set when they were sent).
        await asyncio.sleep(2.2)
        layer.expiry = 1
        assert await overflow.group_send_counting(layer, "kanban.kv.g", {"type": "x"}) == 0
        assert (await layer.receive(full))["type"] == "x", "the fillers expired"
        layer.group_expiry = 1
        assert await overflow.group_send_counting(layer, "kanban.kv.stale", {"type": "x"}) == 0
        assert await overflow.group_holds(layer, "kanban.kv.stale", gone) is False
        assert await redis.zcard(gone_key) == 0
    finally:
        await layer.flush()


class LiveViewer:
    """A watcher on a real socket: applies pushed values in the order they come; on
    ``resync`` re-reads every key (``getMany``), as the Board's load() does, then goes on
    with the events that came meanwhile."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket, self.next_id = socket, 0
        self.values: dict[str, Any] = {}
        self.resyncs = 0
        #: Change events heard (a resync not counted).
        self.events = 0
        #: Events that came while a call waited for its answer, to apply after it.
        self.backlog: list[dict[str, Any]] = []

    async def call(self, op: str, **fields: Any) -> Any:
        self.next_id += 1
        request = self.next_id
        await self.socket.send(json.dumps({"v": 1, "id": request, "op": op, **fields}))
        while True:
            message = json.loads(await asyncio.wait_for(self.socket.recv(), 30))
            if message.get("id") == request:
                assert message["ok"], message
                return message["result"]
            self.backlog.append(message)

    async def settle(self) -> None:
        while self.backlog:
            event = self.backlog.pop(0)
            if event.get("event") != "changes":
                continue
            for change in event["changes"]:
                if "value" in change:
                    self.values[change["key"]] = change["value"]
            if event.get("resync"):
                self.resyncs += 1
                self.values = await self.read_all()
            else:
                self.events += 1

    async def read_all(self) -> dict[str, Any]:
        keys = [f"stock:{n}" for n in range(KEYS)]
        entries = await self.call("getMany", alias="inventory", value=keys)
        return {key: e["value"] for key, e in zip(keys, entries, strict=True) if e["found"]}

    async def drain(self, quiet: float) -> None:
        """Apply events until none came for ``quiet`` seconds."""
        await self.settle()
        while True:
            try:
                text = await asyncio.wait_for(self.socket.recv(), quiet)
            except TimeoutError:
                return
            self.backlog.append(json.loads(text))
            await self.settle()


@pytest.mark.redis
async def test_a_flood_past_a_small_capacity_leaves_no_viewer_silently_behind(
    live_servers: Callable[..., list[LiveServer]],
    small_redis_layer: dict[str, str],
    scene: dict[str, Any],
) -> None:
    """Two workers, viewers on both. The second worker stops (a pause, a starved CPU) while
    writes flood through the first: its channel fills at ``CAPACITY`` and the rest are
    dropped. Once it runs again, each of its viewers is told to resync and ends with the
    store's values, as does every viewer of the first worker."""
    first, second = live_servers(2, env=small_redis_layer)
    # Viewers read nothing while the flood lasts: their pings would wait behind it.
    quiet = {"ping_interval": None, "max_queue": None}
    viewers = [
        LiveViewer(await open_board_socket(server, scene["board"].id, scene["cookie"], **quiet))
        for server in (first, second)
        for _ in range(VIEWERS)
    ]
    writers = [LiveViewer(await open_socket(first, scene)) for _ in range(4)]
    try:
        for viewer in viewers:
            await viewer.call("watch", alias="inventory", value={"prefix": "stock:"})
            viewer.values = await viewer.read_all()
        started = time.monotonic()
        os.kill(second.pid, signal.SIGSTOP)
        try:

            async def flood(writer: LiveViewer, start: int) -> None:
                for n in range(start, WRITES, len(writers)):
                    await writer.call("set", alias="inventory", key=f"stock:{n % KEYS}", value=n)

            await asyncio.gather(*(flood(w, i) for i, w in enumerate(writers)))
        finally:
            os.kill(second.pid, signal.SIGCONT)
        expected = await writers[0].read_all()
        assert len(expected) == KEYS
        await asyncio.gather(*(viewer.drain(quiet=4.0) for viewer in viewers))
        # The numbers of a run (a full-size one prints them with -s): each worker's
        # viewers, the events they heard of the writes, the resyncs they were told, and the
        # worker's own count of projects resynced over dropped messages.
        for name, server, own in (
            ("first", first, viewers[:VIEWERS]),
            ("second", second, viewers[VIEWERS:]),
        ):
            dropped = metric(server, "kanban_hub_dropped_resyncs_total")
            print(
                f"overload {name} worker: {WRITES} writes, capacity {CAPACITY}, "
                f"{len(own)} viewers heard {min(v.events for v in own)}-"
                f"{max(v.events for v in own)} events and {sum(v.resyncs for v in own)} "
                f"resyncs; the hub resynced over drops {dropped:.0f} times"
            )
        print(f"overload: {time.monotonic() - started:.1f} s from the flood to all settled")
        behind = [i for i, viewer in enumerate(viewers) if viewer.values != expected]
        assert behind == [], f"viewers {behind} silently behind"
        resynced = [viewer.resyncs for viewer in viewers[VIEWERS:]]
        assert all(resynced), f"the stopped worker's viewers were not all told: {resynced}"
    finally:
        for client in [*viewers, *writers]:
            await client.socket.close()
