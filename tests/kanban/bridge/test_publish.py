"""The sending side. What crosses processes is JSON: every message published on the
channel layer (a committed write, an access change, a re-imported plugin) survives a JSON
round trip, so a layer other than msgpack, or a reader in another language, gets the same
event. And nothing is sent before a commit: a rolled-back write publishes nothing."""

from __future__ import annotations

import contextlib
import json
from typing import Any
from uuid import uuid4

import pytest
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
