"""Driving the bridge websocket by hand through the real ASGI stack, as a user could."""

from __future__ import annotations

import json
from typing import Any

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from kanban.asgi import application
from kanban.models import Project

ORIGIN = (b"origin", b"http://127.0.0.1")
#: The websocket Origin must match the Host the browser used (kanban/bridge/origin.py).
HOST = (b"host", b"127.0.0.1")
#: Generous: a connect runs a database query in a thread, and CI machines are loaded.
CONNECT_TIMEOUT = 10


def session_cookie(user: Any) -> bytes:
    client = Client()
    client.force_login(user)
    name = settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}".encode()


class Bridge:
    """A hand-driven bridge connection, speaking the wire protocol directly."""

    def __init__(self, communicator: WebsocketCommunicator) -> None:
        self.communicator = communicator
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

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
        return json.loads(await self.communicator.receive_from(timeout=timeout))

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
        return await self.communicator.receive_nothing(timeout=timeout) and not self.events


async def open_bridge(project: Project, user: Any, *, headers: list[Any] | None = None) -> Any:
    cookie = await database_sync_to_async(session_cookie)(user)
    communicator = WebsocketCommunicator(
        application,
        f"/ws/boards/{project.id}/",
        headers=headers if headers is not None else [ORIGIN, HOST, (b"cookie", cookie)],
    )
    connected, code = await communicator.connect(timeout=CONNECT_TIMEOUT)
    return communicator, connected, code
