"""A small websocket client for the bench's many viewers: an asyncio ``Protocol`` that
parses frames itself.

The ``websockets`` library costs a simulated viewer a few hundred microseconds of Python per
message (a reader task, a queue, an iterator hop); with 1,000 viewers on two cores that is
the client, not the server, being measured. This client does only what a bench viewer
needs: the opening handshake (with the session cookie and the page's Origin), text frames
both ways (its own masked, as a client's must be), and answering pings and closes.
"""

from __future__ import annotations

import asyncio
import base64
import os
import struct
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

OP_CONTINUATION, OP_TEXT, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x8, 0x9, 0xA


class HandshakeRefused(ConnectionError):
    def __init__(self, status: int) -> None:
        super().__init__(f"the server answered the websocket handshake with {status}")
        self.status = status


def _mask(payload: bytes, key: bytes) -> bytes:
    if not payload:
        return payload
    repeated = (key * (len(payload) // 4 + 1))[: len(payload)]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(
        len(payload), "big"
    )


def frame(opcode: int, payload: bytes) -> bytes:
    """A client frame: final, masked."""
    key = os.urandom(4)
    size = len(payload)
    if size < 126:
        header = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
    elif size < 1 << 16:
        header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
    else:
        header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
    return header + key + _mask(payload, key)


class Link(asyncio.Protocol):
    """One websocket; ``on_text`` hears every text message, in order."""

    def __init__(self, request: bytes, on_text: Callable[[str], Any]) -> None:
        self.request = request
        self.on_text = on_text
        self.buffer = bytearray()
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None
        self.parts: list[bytes] = []
        #: The code of the server's close frame, when it sent one.
        self.close_code: int | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.opened.done():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            status = int(self.buffer[: self.buffer.find(b"\r\n")].split()[1])
            del self.buffer[: end + 4]
            if status != 101:
                self.opened.set_exception(HandshakeRefused(status))
                self.close()
                return
            self.opened.set_result(None)
        self._frames()

    def _frames(self) -> None:
        buffer = self.buffer
        while len(buffer) >= 2:
            first, second = buffer[0], buffer[1]
            size, at = second & 0x7F, 2
            if size == 126:
                if len(buffer) < 4:
                    return
                size, at = struct.unpack_from("!H", buffer, 2)[0], 4
            elif size == 127:
                if len(buffer) < 10:
                    return
                size, at = struct.unpack_from("!Q", buffer, 2)[0], 10
            if len(buffer) < at + size:
                return
            payload = bytes(buffer[at : at + size])
            del buffer[: at + size]
            opcode = first & 0x0F
            if opcode in (OP_TEXT, OP_CONTINUATION):
                self.parts.append(payload)
                if first & 0x80:
                    text = b"".join(self.parts).decode("utf-8")
                    self.parts = []
                    self.on_text(text)
            elif opcode == OP_PING:
                self._write(frame(OP_PONG, payload))
            elif opcode == OP_CLOSE:
                if len(payload) >= 2:
                    self.close_code = struct.unpack_from("!H", payload)[0]
                self._write(frame(OP_CLOSE, payload[:2]))
                self.close()
                return

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def send(self, text: str) -> None:
        self._write(frame(OP_TEXT, text.encode("utf-8")))

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("closed during the handshake"))
        if not self.closed.done():
            self.closed.set_result(None)


async def open_link(url: str, *, cookie: str, origin: str, on_text: Callable[[str], Any]) -> Link:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Origin: {origin}\r\nCookie: {cookie}\r\n\r\n"
    ).encode("latin-1")
    loop = asyncio.get_running_loop()
    _, link = await loop.create_connection(lambda: Link(request, on_text), host, port)
    await link.opened
    return link
