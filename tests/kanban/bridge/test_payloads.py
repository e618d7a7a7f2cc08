"""What crosses processes is JSON: every message the hub sends on the channel layer (a
committed write, an access change, a re-imported plugin) survives a JSON round trip, so a
layer other than msgpack, or a reader in another language, gets the same event."""

from __future__ import annotations

import json
from typing import Any
from uuid import uuid4

import pytest

from kanban.bridge import hub


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    messages: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(
        hub, "_group_send", lambda group, message: messages.append((group, message))
    )
    return messages


def test_every_layer_message_is_json(sent: list[tuple[str, dict[str, Any]]]) -> None:
    project = uuid4()
    hub.publish_changes(
        project, [("kv", "card:1", "7"), ("knowledge", "knowledge.document.a", "8")]
    )
    hub.publish_access_changed([project], [1, 2])
    hub.publish_plugin_changed(project, "sha256:abc")

    assert [message["type"] for _, message in sent] == [
        "kv.changed",
        "access.changed",
        "plugin.changed",
    ]
    for _, message in sent:
        assert json.loads(json.dumps(message)) == message
