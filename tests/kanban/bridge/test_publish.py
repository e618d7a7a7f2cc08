"""The sending side. What crosses processes is JSON: every message published on the
channel layer (a committed write, an access change, a re-imported plugin) survives a JSON
round trip, so a layer other than msgpack, or a reader in another language, gets the same
event. And nothing is sent before a commit: a rolled-back write publishes nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any
from uuid import uuid4

import pytest
from asgiref.sync import sync_to_async
from django.db import transaction

from kanban.bridge import publish
from kanban.data.change_groups import CHANGED, project_group
from storage.kv import Dataset, kv_set


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    messages: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(
        publish, "_group_send", lambda group, message: messages.append((group, message))
    )
    return messages


def test_every_layer_message_is_json(sent: list[tuple[str, dict[str, Any]]]) -> None:
    project = uuid4()
    publish.publish_changes(
        project, [("kv", "card:1", "7"), ("knowledge", "knowledge.document.a", "8")]
    )
    publish.publish_access_changed([project], [1, 2])
    publish.publish_plugin_changed(project, "sha256:abc")

    assert [message["type"] for _, message in sent] == [
        "kv.changed",
        "access.changed",
        "plugin.changed",
    ]
    for _, message in sent:
        assert json.loads(json.dumps(message)) == message


class Boom(Exception):
    pass


@pytest.mark.django_db(transaction=True)
def test_a_write_is_sent_once_it_commits_and_never_when_it_rolls_back(
    sent: list[tuple[str, dict[str, Any]]],
) -> None:
    dataset = Dataset(uuid4())
    with contextlib.suppress(Boom), transaction.atomic():
        kv_set(dataset=dataset, key="card:1", value=1, source={"via": "api"})
        raise Boom
    assert sent == []

    with transaction.atomic():
        kv_set(dataset=dataset, key="card:1", value=2, source={"via": "api"})
        assert sent == [], "nothing leaves before the commit"

    assert [(group, message["type"]) for group, message in sent] == [
        (project_group(dataset.project_id), CHANGED)
    ]


class SlowLayer:
    """A layer whose change messages wait for ``gate``, as a busy Redis would."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        if message["type"] == CHANGED:
            await self.gate.wait()
        self.sent.append((group, message))


async def test_a_worker_thread_hands_its_sends_to_the_loop_in_order_per_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A committed change's thread returns without waiting for the layer, its loop sends
    each group's messages in the order they were published; an access change's thread
    still waits until its message is sent."""
    layer = SlowLayer()
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    project = uuid4()

    def in_worker_thread() -> asyncio.AbstractEventLoop | None:
        for n in range(1, 4):
            publish.publish_changes(project, [("kv", "card:1", str(n))])
        publish.publish_access_changed([project], [7])
        # Only the access change has gone: the changes wait behind the layer's gate.
        assert [m["type"] for _, m in layer.sent] == ["access.changed"]
        return publish._worker_loop()

    loop = await sync_to_async(in_worker_thread, thread_sensitive=False)()
    assert loop is asyncio.get_running_loop()  # the seam: asgiref names the calling loop
    layer.gate.set()
    for _ in range(100):
        if len(layer.sent) == 4:
            break
        await asyncio.sleep(0.01)
    changes = [m for g, m in layer.sent if g == project_group(project)]
    assert [m["changes"][0][2] for m in changes] == ["1", "2", "3"]
    assert [m["seq"] for m in changes] == sorted(m["seq"] for m in changes)


def test_a_thread_no_loop_handed_its_call_sends_and_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    layer = SlowLayer()
    layer.gate.set()
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    assert publish._worker_loop() is None
    publish.publish_changes(uuid4(), [("kv", "card:1", "1")])
    assert [m["type"] for _, m in layer.sent] == [CHANGED]


class StuckLayer:
    """A layer that never answers, as a worker's loop that stops after the hand-off."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await self.gate.wait()


async def test_a_thread_waiting_on_a_send_that_never_comes_goes_on_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    layer = StuckLayer()
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    monkeypatch.setattr(publish, "SEND_WAIT_SECONDS", 0.05)
    await sync_to_async(publish.publish_access_changed, thread_sensitive=False)([uuid4()], [7])
    assert "access.changed for kanban.access was not sent within" in caplog.text
    layer.gate.set()


async def test_what_queues_behind_a_slow_send_goes_out_together_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A busy board's writers must not outpace its sender: the changes that queued while
    one send was on its way go in the next one, not one round trip each."""
    layer = SlowLayer()
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    sends: list[list[str]] = []
    real = publish.send_or_keep

    async def recorded(layer: Any, group: str, *messages: dict[str, Any]) -> None:
        sends.append([m["changes"][0][2] for m in messages])
        await real(layer, group, *messages)

    monkeypatch.setattr(publish, "send_or_keep", recorded)
    project = uuid4()

    def write(*numbers: int) -> None:
        for n in numbers:
            publish.publish_changes(project, [("kv", "card:1", str(n))])

    await sync_to_async(write, thread_sensitive=False)(1)
    for _ in range(100):  # the first send is on its way, held at the layer's gate
        if sends:
            break
        await asyncio.sleep(0.01)
    await sync_to_async(write, thread_sensitive=False)(2, 3, 4)
    layer.gate.set()
    for _ in range(100):
        if len(layer.sent) == 4:
            break
        await asyncio.sleep(0.01)
    assert sends == [["1"], ["2", "3", "4"]]
    assert [m["changes"][0][2] for _, m in layer.sent] == ["1", "2", "3", "4"]


async def test_past_its_bound_a_loops_backlog_makes_the_next_writer_wait_its_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When Redis falls behind for long, the queue of unsent changes stops growing: a
    writer whose loop already holds ``MAX_UNSENT`` waits until its own change is sent, then
    everything arrives, in order."""
    layer = SlowLayer()
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    monkeypatch.setattr(publish, "MAX_UNSENT", 2)
    project = uuid4()

    def write(n: int) -> None:
        publish.publish_changes(project, [("kv", "card:1", str(n))])

    await sync_to_async(write, thread_sensitive=False)(1)
    await sync_to_async(write, thread_sensitive=False)(2)
    third = asyncio.ensure_future(sync_to_async(write, thread_sensitive=False)(3))
    await asyncio.sleep(0.2)
    assert not third.done(), "the third writer went on with two changes unsent before it"
    layer.gate.set()
    await asyncio.wait_for(third, timeout=5)
    assert [m["changes"][0][2] for _, m in layer.sent] == ["1", "2", "3"]
    assert publish._outboxes.get().unsent == 0
