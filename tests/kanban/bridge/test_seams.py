"""The framework behaviour each shortcut around Django or Channels relies on, pinned, so an
upgrade that changes it fails here, by name, instead of breaking the bridge quietly.

Each shortcut is one named place in the code:
- ``storage.engine.driver_cursor`` keeps one idle driver cursor per Django connection, in the
  connection's ``__dict__``, valid while ``connection.connection`` is the same object;
- ``BridgeConsumer.channel_layer_alias`` names no layer, so Channels gives a socket no
  channel of its own (events reach sockets through the process's hub);
- ``BridgeConsumer.send_text`` sends straight to ``base_send`` the message Channels'
  ``send(text_data=...)`` would;
- ``kanban.bridge.auth.session_user`` reads the user through ``django.contrib.auth.get_user``
  (tests/kanban/bridge/test_auth.py pins that a changed password ends the session);
- ``DATABASES["default"]["OPTIONS"]["prepare_threshold"]`` undoes Django's default of no
  prepared statements, so the engine's and the access decision's statements, which bind on
  the server, are prepared after a few uses per connection (Django's own cursors bind on
  the client and never are).
"""

from __future__ import annotations

from typing import Any
from uuid import uuid4

import pytest
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.db import connection

from kanban.bridge.consumer import BridgeConsumer
from storage import engine
from storage.kv import Dataset


@pytest.mark.django_db
def test_the_engines_statements_are_prepared_on_postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    dataset = Dataset(uuid4(), "kv", None)
    for _ in range(3):
        engine.get_value(dataset.address("card"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any("FROM scalar_values" in statement for statement in prepared), prepared


# Outside a transaction: inside one, Django keeps a closed connection until it ends.
@pytest.mark.django_db(transaction=True)
def test_a_django_connection_gets_a_new_driver_connection_after_close() -> None:
    with engine.driver_cursor("default") as (_, first):
        pass
    raw = connection.connection
    with engine.driver_cursor("default") as (_, again):
        assert again is first, "the idle cursor is reused on the same driver connection"
    connection.close()
    assert connection.connection is None, "Django drops the driver connection on close"
    with engine.driver_cursor("default") as (_, fresh):
        assert connection.connection is not raw
        assert fresh is not first, "a stale cursor of the old connection is never used"


def test_a_consumer_whose_layer_alias_is_not_configured_gets_no_layer() -> None:
    assert get_channel_layer(BridgeConsumer.channel_layer_alias) is None


async def test_send_text_sends_what_channels_send_would() -> None:
    sent: dict[str, list[Any]] = {"channels": [], "ours": []}

    async def channels_send(message: Any) -> None:
        sent["channels"].append(message)

    async def our_send(message: Any) -> None:
        sent["ours"].append(message)

    reference = AsyncWebsocketConsumer()
    reference.base_send = channels_send
    await reference.send(text_data='{"v":1}')
    ours = BridgeConsumer()
    ours.base_send = our_send
    await ours.send_text('{"v":1}')

    assert sent["ours"] == sent["channels"] == [{"type": "websocket.send", "text": '{"v":1}'}]
