"""The framework behaviour each shortcut around Django or Channels relies on, pinned, so an
upgrade that changes it fails here, by name, instead of breaking the bridge quietly.

Each shortcut is one named place in the code:
- ``storage.engine.driver_cursor`` keeps one idle driver cursor per Django connection, in the
  connection's ``__dict__``, valid while ``connection.connection`` is the same object;
- ``BridgeConsumer.channel_layer_alias`` names no layer, so Channels gives a socket no
  channel of its own (events reach sockets through the process's hub);
- ``NoConnectionCloseDispatch.dispatch`` (the bridge's and the inbox's consumers) is
  Channels' ``AsyncConsumer.dispatch`` without its ``aclose_old_connections()`` before each
  message, a thread crossing for a connection these consumers never use on the loop;
- ``BridgeConsumer.send_text`` sends straight to ``base_send`` the message Channels'
  ``send(text_data=...)`` would;
- ``BridgeConsumer.write_frame`` writes the hub's pre-built event frame to daphne's
  connection itself (autobahn's protocol over Twisted's TCP connection), sending what the
  kernel takes and leaving the rest to Twisted, and declines whenever either library holds
  something back;
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
from channels import consumer as channels_consumer
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.db import connection

from kanban.bridge.consumer import BridgeConsumer
from kanban.bridge.inbox import InboxConsumer
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


async def test_channels_closes_old_connections_before_each_message_and_the_bridge_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    closes: list[None] = []

    async def counting_close() -> None:
        closes.append(None)

    monkeypatch.setattr(channels_consumer, "aclose_old_connections", counting_close)
    handled: list[str] = []

    class Reference(AsyncWebsocketConsumer):
        async def websocket_receive(self, message: dict[str, Any]) -> None:
            handled.append("reference")

    await Reference().dispatch({"type": "websocket.receive", "text": "{}"})
    assert closes == [None], "Channels still closes connections first: the seam is needed"

    for ours in (BridgeConsumer, InboxConsumer):

        class Ours(ours):  # type: ignore[misc, valid-type]
            async def websocket_receive(self, message: dict[str, Any]) -> None:
                handled.append(type(self).__mro__[1].__name__)

        await Ours().dispatch({"type": "websocket.receive", "text": "{}"})
        with pytest.raises(ValueError, match="No handler for message type nothing"):
            await Ours().dispatch({"type": "nothing.here"})
    assert closes == [None], "the bridge's consumers cross into no thread per message"
    assert handled == ["reference", "BridgeConsumer", "InboxConsumer"]


class FakeTwistedTransport:
    """What ``write_frame`` reads of Twisted's TCP connection (twisted.internet.tcp)."""

    def __init__(self, takes: int) -> None:
        self.connected, self._writeDisconnected = True, False
        self._tempDataBuffer: list[bytes] = []
        self.dataBuffer, self.offset = b"", 0
        self.takes = takes
        self.socket = self
        self.on_wire: list[bytes] = []
        self.buffered: list[bytes] = []

    def send(self, data: bytes) -> int:
        self.on_wire.append(data[: self.takes])
        return min(self.takes, len(data))

    def write(self, data: bytes) -> None:
        self.buffered.append(data)
        self._tempDataBuffer.append(data)


class FakeAutobahnProtocol:
    STATE_OPEN, STATE_CLOSING = 3, 4

    def __init__(self, transport: FakeTwistedTransport) -> None:
        self.state = self.STATE_OPEN
        self.send_queue: list[Any] = []
        self.transport = transport


def consumer_on(protocol: Any) -> BridgeConsumer:
    from functools import partial

    consumer = BridgeConsumer()
    consumer.base_send = partial(lambda protocol, message: None, protocol)
    return consumer


def test_write_frame_sends_what_the_kernel_takes_and_leaves_the_rest_to_twisted_in_order() -> None:
    transport = FakeTwistedTransport(takes=5)
    consumer = consumer_on(FakeAutobahnProtocol(transport))
    assert consumer.write_frame(b"0123456789")
    assert (transport.on_wire, transport.buffered) == ([b"01234"], [b"56789"])
    # Twisted now holds bytes: the next frame must queue behind them, never overtake.
    assert consumer.write_frame(b"abc")
    assert (transport.on_wire, transport.buffered) == ([b"01234"], [b"56789", b"abc"])


def test_write_frame_declines_when_autobahn_queues_or_the_socket_closes() -> None:
    for change in ("queued", "closing", "disconnected", "not daphne"):
        transport = FakeTwistedTransport(takes=100)
        protocol = FakeAutobahnProtocol(transport)
        if change == "queued":
            protocol.send_queue.append((b"held", False))
        elif change == "closing":
            protocol.state = protocol.STATE_CLOSING
        elif change == "disconnected":
            transport.connected = False
        consumer = consumer_on(protocol) if change != "not daphne" else BridgeConsumer()
        if change == "not daphne":

            async def asgi_send(message: Any) -> None: ...

            consumer.base_send = asgi_send
        assert consumer.write_frame(b"frame") is False, change
        assert transport.on_wire == transport.buffered == []


def test_the_libraries_still_have_what_write_frame_reads() -> None:
    """daphne hands the socket ``partial(server.handle_reply, protocol)``; its protocol is
    autobahn's, over Twisted's TCP connection."""
    import inspect

    from autobahn.websocket.protocol import WebSocketProtocol
    from daphne.server import Server
    from twisted.internet import abstract, tcp

    assert "send=partial(self.handle_reply, protocol)" in inspect.getsource(
        Server.create_application
    )
    assert isinstance(WebSocketProtocol.STATE_OPEN, int)
    assert "self.send_queue" in inspect.getsource(WebSocketProtocol.sendData)
    descriptor = inspect.getsource(abstract.FileDescriptor)
    for name in ("self._tempDataBuffer", "self.dataBuffer", "self.offset", "_writeDisconnected"):
        assert name in descriptor, name
    assert "self.socket" in inspect.getsource(tcp.Connection)


def test_a_server_frame_is_what_autobahn_frames() -> None:
    from kanban.bridge.frames import server_frame

    for size in (0, 5, 125, 126, 65535, 65536, 200_000):
        text = "é" * (size // 2) + "x" * (size % 2)
        payload = text.encode()
        if len(payload) < 126:
            header = bytes((0x81, len(payload)))
        elif len(payload) < 65536:
            header = bytes((0x81, 126)) + len(payload).to_bytes(2, "big")
        else:
            header = bytes((0x81, 127)) + len(payload).to_bytes(8, "big")
        assert server_frame(text) == header + payload
