"""Every worker runs ``python -m kanban.daphne``: daphne with its websocket frame cap derived
from the protocol's limits. A frame past the largest valid one plus a margin closes the
socket with 1009 as soon as its header says how long it is, before any of it is buffered;
one at the cap still reaches the consumer (the document-limit scenario sends one at its limit).

A red team sent 64 MiB text frames: daphne's cap was twice the largest valid frame (about
100 MiB), so each was read whole before the consumer answered ``too_large``, and a few
sockets held gigabytes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
from collections.abc import Callable
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from kanban.daphne import max_frame_bytes, websocket_arguments
from kanban.data.request_size import max_request_bytes
from storage import limits
from tests.factories import a_project, a_user
from tests.kanban.bridge.helpers import session_cookie
from tests.live import LiveServer, open_board_socket

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGE_TOO_BIG = 1009


@pytest.fixture
def scene(transactional_db: None) -> dict[str, Any]:
    mallory = a_user("mallory")
    board = a_project(name="Board", members={mallory: "developer"})
    return {"board": board, "cookie": session_cookie(mallory).decode()}


def text_frame_header(length: int) -> bytes:
    """A masked client text frame's header announcing ``length`` bytes of payload."""
    return struct.pack("!BBQ", 0x81, 0x80 | 127, length) + b"\x00\x00\x00\x00"


async def close_code(socket: Any, timeout: float = 10) -> int | None:
    """The code the server closed ``socket`` with (None: it closed without one)."""
    try:
        while True:
            await asyncio.wait_for(socket.recv(), timeout)
    except ConnectionClosed as closed:
        return None if closed.rcvd is None else closed.rcvd.code


def test_the_cap_is_the_largest_valid_frame_plus_one_envelope_from_the_spec() -> None:
    largest_valid = max_request_bytes()
    assert max_frame_bytes() == largest_valid + limits.ENVELOPE_BYTES
    assert max_frame_bytes() < 64 * 2**20, "a red team's 64 MiB frame is past it"
    arguments = websocket_arguments()
    for option in ("--websocket-max-frame-size", "--websocket-max-message-size"):
        assert arguments[arguments.index(option) + 1] == str(max_frame_bytes())


async def test_a_64_mib_frame_is_closed_with_1009_on_its_header_alone(
    live_servers: Callable[..., list[LiveServer]], scene: dict[str, Any]
) -> None:
    """Only the header and a few bytes are sent: the worker answers without waiting for
    (and so without holding) the 64 MiB it announces."""
    (server,) = await asyncio.to_thread(live_servers, 1)
    socket = await open_board_socket(server, scene["board"].id, scene["cookie"])
    socket.transport.write(text_frame_header(64 * 2**20) + b'{"v":1,')
    assert await close_code(socket) == MESSAGE_TOO_BIG

    # The worker is none the worse: the next socket is served.
    again = await open_board_socket(server, scene["board"].id, scene["cookie"])
    await again.send(json.dumps({"v": 1, "id": 1, "op": "get", "key": "k"}))
    assert json.loads(await asyncio.wait_for(again.recv(), 10))["ok"] is True
    await again.close()


async def test_a_frame_one_byte_past_the_cap_is_closed_with_1009_and_one_at_it_is_answered(
    live_servers: Callable[..., list[LiveServer]], scene: dict[str, Any]
) -> None:
    (server,) = await asyncio.to_thread(live_servers, 1)
    board, cookie = scene["board"].id, scene["cookie"]

    at_cap = await open_board_socket(server, board, cookie, max_size=None)
    await at_cap.send(" " * (max_frame_bytes() - 2) + "{}")
    reply = json.loads(await asyncio.wait_for(at_cap.recv(), 60))
    assert reply["error"]["code"] == "too_large", "the consumer's own answer, not a close"
    await at_cap.close()

    past = await open_board_socket(server, board, cookie, max_size=None)
    with contextlib.suppress(ConnectionClosed):  # closed while sending: its code is below
        await past.send(" " * (max_frame_bytes() - 1) + "{}")
    assert await close_code(past) == MESSAGE_TOO_BIG


def test_the_seam_closes_with_a_frame_and_keeps_daphnes_options() -> None:
    """What ``ClosingWebSocketFactory`` relies on: daphne's ``Server.run`` builds its factory
    from the module's ``WebSocketFactory`` name and sets the caps through
    ``setProtocolOptions``; the seam adds only ``failByDrop=False``."""
    import inspect

    import daphne.server

    from kanban.daphne import ClosingWebSocketFactory

    run = inspect.getsource(daphne.server.Server.run)
    assert "self.ws_factory = WebSocketFactory(" in run
    assert "maxFramePayloadSize=self.websocket_max_frame_size" in run
    factory = ClosingWebSocketFactory(None)
    factory.setProtocolOptions(maxFramePayloadSize=7, maxMessagePayloadSize=7)
    assert (factory.failByDrop, factory.maxFramePayloadSize, factory.maxMessagePayloadSize) == (
        False,
        7,
        7,
    )
