"""The inbox socket every page holds: bob's count arrives when it opens and again when alice
notifies him through her board's bridge; it ends when his session does, and an anonymous
page gets none."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from kanban.access.events import publish_access_changed
from kanban.asgi import application
from kanban.data.members import member_set, offer_decline, offers_mine
from tests.factories import a_project, a_user
from tests.kanban.bridge.helpers import CONNECT_TIMEOUT, HOST, ORIGIN, Bridge, open_bridge

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(transactional_db: None) -> dict[str, Any]:
    alice, bob = a_user("alice"), a_user("bob", password="first password")
    board = a_project(name="Launch", owner=alice, members={bob: "developer"})
    return {"board": board, "alice": alice, "bob": bob}


async def open_inbox(cookie: bytes | None) -> WebsocketCommunicator:
    headers = [ORIGIN, HOST] + ([(b"cookie", cookie)] if cookie else [])
    communicator = WebsocketCommunicator(application, "/ws/inbox/", headers=headers)
    connected, _ = await communicator.connect(timeout=CONNECT_TIMEOUT)
    assert connected
    return communicator


@database_sync_to_async
def signed_in(user: Any) -> tuple[Client, bytes]:
    client = Client()
    client.force_login(user)
    name = settings.SESSION_COOKIE_NAME
    return client, f"{name}={client.cookies[name].value}".encode()


async def unread(communicator: WebsocketCommunicator) -> int:
    return int(json.loads(await communicator.receive_from(timeout=5))["unread"])


async def test_bobs_count_goes_up_when_alice_mentions_him_from_her_board(
    people: dict[str, Any],
) -> None:
    _, cookie = await signed_in(people["bob"])
    inbox = await open_inbox(cookie)
    assert await unread(inbox) == 0

    communicator, connected, _ = await open_bridge(people["board"], people["alice"])
    assert connected
    alice = Bridge(communicator)
    reply = await alice.call("notify", value={"users": ["bob"], "text": "@bob look", "card": "c1"})
    assert reply == {"v": 1, "id": 1, "ok": True, "result": {"sent": ["bob"]}}
    assert await unread(inbox) == 1

    refused = await alice.call("notify", value={"users": ["mallory"], "text": "hi"})
    assert refused["error"]["code"] == "invalid_argument"
    related = await alice.call("notify", alias="inventory", value={"users": ["bob"], "text": "x"})
    assert related["error"]["code"] == "invalid_argument"
    await communicator.disconnect()
    await inbox.disconnect()


async def test_the_inbox_ends_with_the_session_and_an_anonymous_page_gets_none(
    people: dict[str, Any],
) -> None:
    anonymous = await open_inbox(None)
    assert await anonymous.receive_output(timeout=5) == {"type": "websocket.close", "code": 4401}

    _, cookie = await signed_in(people["bob"])
    inbox = await open_inbox(cookie)
    assert await unread(inbox) == 0

    @database_sync_to_async
    def change_password() -> None:
        people["bob"].set_password("second password")
        people["bob"].save()
        publish_access_changed(user_ids={people["bob"].pk})

    await change_password()
    assert await inbox.receive_output(timeout=5) == {"type": "websocket.close", "code": 4401}


async def test_an_inbox_socket_that_talks_is_closed(people: dict[str, Any]) -> None:
    _, cookie = await signed_in(people["bob"])
    inbox = await open_inbox(cookie)
    assert await unread(inbox) == 0
    await inbox.send_to(text_data="{}")
    assert await inbox.receive_output(timeout=5) == {"type": "websocket.close", "code": 4400}


async def test_a_board_offered_to_carol_counts_in_her_inbox_until_she_answers(
    people: dict[str, Any],
) -> None:
    carol = await database_sync_to_async(a_user)("carol")
    _, cookie = await signed_in(carol)
    inbox = await open_inbox(cookie)
    assert await unread(inbox) == 0

    offer = database_sync_to_async(member_set)
    await offer(
        actor=people["alice"], project_id=people["board"].id, username="carol", role="guest"
    )
    assert await unread(inbox) == 1
    [mine] = await database_sync_to_async(offers_mine)(user=carol)
    await database_sync_to_async(offer_decline)(user=carol, offer_id=mine["id"])
    assert await unread(inbox) == 0
    await inbox.disconnect()
