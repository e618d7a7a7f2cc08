"""Driving the bridge websocket by hand through the real ASGI stack, as a user could."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from kanban.asgi import application
from kanban.models import Project

ORIGIN = (b"origin", b"http://127.0.0.1")
#: The websocket Origin must match the Host the browser used (kanban/access/origins.py).
HOST = (b"host", b"127.0.0.1")
#: Generous: a connect runs a database query in a thread, and CI machines are loaded.
CONNECT_TIMEOUT = 10


def session_cookie(user: Any) -> bytes:
    client = Client()
    client.force_login(user)
    name = settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}".encode()


class Bridge:
    """A hand-driven bridge connection, speaking the wire protocol directly. Context events
    (a change of what the user may do) are kept apart in ``contexts``, so a test of other
    events reads those alone."""

    def __init__(self, communicator: WebsocketCommunicator) -> None:
        self.communicator = communicator
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.contexts: list[dict[str, Any]] = []

    async def call(self, op: str, **fields: Any) -> dict[str, Any]:
        self.next_id += 1
        await self.communicator.send_to(
            text_data=json.dumps({"v": 1, "id": self.next_id, "op": op, **fields})
        )
        return await self.reply_to(self.next_id)

    async def send_raw(self, text: str) -> dict[str, Any]:
        await self.communicator.send_to(text_data=text)
        return await self.next_message()

    async def next_message(self, timeout: float = 5) -> dict[str, Any]:
        while True:
            message = json.loads(await self.communicator.receive_from(timeout=timeout))
            if message.get("event") != "context":
                return dict(message)
            self.contexts.append(message["context"])

    async def context(self, timeout: float = 5) -> dict[str, Any]:
        """The next context event (other messages wait in ``events``)."""
        while not self.contexts:
            message = json.loads(await self.communicator.receive_from(timeout=timeout))
            if message.get("event") == "context":
                self.contexts.append(message["context"])
            else:
                self.events.append(message)
        return self.contexts.pop(0)

    async def reply_to(self, request_id: int) -> dict[str, Any]:
        while True:
            message = await self.next_message()
            if message.get("id") == request_id and "ok" in message:
                return message
            self.events.append(message)

    async def event(self, timeout: float = 5) -> dict[str, Any]:
        if self.events:
            return self.events.pop(0)
        return await self.next_message(timeout)

    async def no_message(self, timeout: float = 0.3) -> bool:
        """Nothing but context events comes within ``timeout``."""
        if self.events:
            return False
        while not await self.communicator.receive_nothing(timeout=timeout):
            message = json.loads(await self.communicator.receive_from(timeout=timeout))
            if message.get("event") != "context":
                self.events.append(message)
                return False
            self.contexts.append(message["context"])
        return True


async def open_bridge(project: Project, user: Any, *, headers: list[Any] | None = None) -> Any:
    """A connected socket past its opening context event, which is always first."""
    cookie = await database_sync_to_async(session_cookie)(user)
    communicator = WebsocketCommunicator(
        application,
        f"/ws/boards/{project.id}/",
        headers=headers if headers is not None else [ORIGIN, HOST, (b"cookie", cookie)],
    )
    connected, code = await communicator.connect(timeout=CONNECT_TIMEOUT)
    if connected:
        first = await communicator.receive_output(timeout=CONNECT_TIMEOUT)
        if first["type"] == "websocket.close":
            # Refused after the handshake, with a code the page can read (4401, 4403).
            return communicator, False, first.get("code")
        assert json.loads(first["text"])["event"] == "context", first
    return communicator, connected, code


async def opening_context(communicator: WebsocketCommunicator) -> dict[str, Any]:
    """The context event a socket sends as soon as it is open (kanban/access/context.py)."""
    first = json.loads(await communicator.receive_from(timeout=CONNECT_TIMEOUT))
    assert first["event"] == "context", first
    return dict(first["context"])


@contextlib.asynccontextmanager
async def bridge_for(project: Project, user: Any) -> AsyncIterator[Bridge]:
    """``user``'s bridge socket on ``project``'s page, connected, and closed after."""
    communicator, connected, _ = await open_bridge(project, user)
    assert connected
    try:
        yield Bridge(communicator)
    finally:
        await communicator.disconnect()
