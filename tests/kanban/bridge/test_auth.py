"""Who is on a bridge socket: the session cookie's user, checked the way Django checks a page
request, once at the handshake."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.models import Session
from django.db import OperationalError
from django.test import Client

from kanban.access.events import publish_access_changed
from kanban.access.memberships import membership_set
from kanban.asgi import application
from kanban.bridge.auth import session_user
from kanban.projects.lifecycle import project_create
from tests.factories import a_user
from tests.kanban.bridge.helpers import (
    CONNECT_TIMEOUT,
    HOST,
    ORIGIN,
    Bridge,
    open_bridge,
    session_cookie,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def board(transactional_db: None) -> Any:
    return project_create(name="Board")


@pytest.fixture
def bob(board: Any) -> Any:
    bob = a_user("bob", password="first password")
    membership_set(user=bob, project=board, role="developer")
    return bob


def test_the_session_cookie_names_the_user(bob: Any) -> None:
    session, user = session_user(cookie_header=session_cookie(bob).decode())
    assert user == bob
    assert session is not None and session.get("_auth_user_id") == str(bob.pk)


@pytest.mark.parametrize(
    "cookie_header", ["", "csrftoken=abc", f"{settings.SESSION_COOKIE_NAME}=no-such-session"]
)
def test_no_cookie_or_an_unknown_session_is_anonymous(cookie_header: str) -> None:
    _, user = session_user(cookie_header=cookie_header)
    assert isinstance(user, AnonymousUser)


def test_a_session_from_before_a_password_change_is_anonymous(bob: Any) -> None:
    client = Client()
    assert client.login(username="bob", password="first password")
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    bob.set_password("second password")
    bob.save()
    _, user = session_user(cookie_header=cookie)
    assert isinstance(user, AnonymousUser)


def test_a_deactivated_users_session_is_anonymous(bob: Any) -> None:
    cookie = session_cookie(bob).decode()
    bob.is_active = False
    bob.save(update_fields=["is_active"])
    _, user = session_user(cookie_header=cookie)
    assert isinstance(user, AnonymousUser)


async def test_a_socket_with_a_stale_session_is_refused(board: Any, bob: Any) -> None:
    cookie = await database_sync_to_async(session_cookie)(bob)

    def change_password() -> None:
        bob.set_password("second password")
        bob.save()

    await database_sync_to_async(change_password)()
    _, connected, _ = await open_bridge(board, bob, headers=[ORIGIN, HOST, (b"cookie", cookie)])
    assert not connected


async def test_the_socket_never_writes_the_session(board: Any, bob: Any) -> None:
    cookie = await database_sync_to_async(session_cookie)(bob)
    key = cookie.decode().split("=", 1)[1]
    before = await database_sync_to_async(Session.objects.get)(pk=key)
    communicator, connected, _ = await open_bridge(
        board, bob, headers=[ORIGIN, HOST, (b"cookie", cookie)]
    )
    assert connected
    await communicator.disconnect()
    after = await database_sync_to_async(Session.objects.get)(pk=key)
    assert (after.session_data, after.expire_date) == (before.session_data, before.expire_date)


def pool_exhausted(**_: Any) -> Any:
    raise OperationalError("couldn't get a connection after 10.00 sec")


@pytest.mark.parametrize(
    "failing", ["kanban.bridge.auth.session_user", "kanban.projects.boards.access_board"]
)
async def test_a_database_failure_at_connect_says_try_again_later_not_forbidden(
    board: Any, bob: Any, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    cookie = await database_sync_to_async(session_cookie)(bob)
    monkeypatch.setattr(failing, pool_exhausted)
    communicator = WebsocketCommunicator(
        application, f"/ws/boards/{board.id}/", [ORIGIN, HOST, (b"cookie", cookie)]
    )
    connected, _ = await communicator.connect(timeout=CONNECT_TIMEOUT)
    assert connected
    assert await communicator.receive_output(timeout=CONNECT_TIMEOUT) == {
        "type": "websocket.close",
        "code": 4013,
    }


# --- an open socket after the account changed (red team, Medium 3) -------------------------
# The socket holds the user it had at its handshake. Every call re-reads the account in the
# one access query, so a new password or a deactivation ends access at once even when no
# event announced it (a direct database update, a script, another admin tool).


async def open_socket(board: Any, bob: Any) -> Any:
    communicator, connected, _ = await open_bridge(board, bob)
    assert connected
    bridge = Bridge(communicator)
    assert (await bridge.call("set", key="k", value=1))["ok"] is True
    return communicator, bridge


async def expect_signed_out(communicator: Any, bridge: Any, op: str, **fields: Any) -> None:
    reply = await bridge.call(op, **fields)
    assert reply["ok"] is False and reply["error"]["code"] == "unauthenticated", reply
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4401}


@database_sync_to_async
def change_password(user: Any) -> None:
    user.set_password("changed by an admin")
    user.save()


@database_sync_to_async
def deactivate_behind_djangos_back(user: Any) -> None:
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)


async def test_an_open_socket_cannot_write_after_a_password_change(board: Any, bob: Any) -> None:
    communicator, bridge = await open_socket(board, bob)
    await change_password(bob)
    await expect_signed_out(communicator, bridge, "set", key="k", value=2)


async def test_an_open_socket_cannot_read_after_a_deactivation_in_the_database(
    board: Any, bob: Any
) -> None:
    communicator, bridge = await open_socket(board, bob)
    await deactivate_behind_djangos_back(bob)
    await expect_signed_out(communicator, bridge, "get", key="k")


async def test_a_recheck_after_a_password_change_ends_the_socket(board: Any, bob: Any) -> None:
    communicator, bridge = await open_socket(board, bob)
    assert (await bridge.call("subscribe"))["ok"] is True
    await change_password(bob)
    await database_sync_to_async(publish_access_changed)(user_ids={bob.pk})
    invalidated = await bridge.event()
    assert invalidated["event"] == "invalidated" and invalidated["code"] == "unauthenticated"
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4401}


async def test_a_recheck_the_database_cannot_answer_asks_the_page_to_reconnect(
    board: Any, bob: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    communicator, bridge = await open_socket(board, bob)
    assert (await bridge.call("subscribe"))["ok"] is True
    # Not held open on the rules it had, its events held back for ever: closed, so that
    # the page's next socket is checked from scratch.
    monkeypatch.setattr("kanban.bridge.service.recheck_socket", pool_exhausted)
    await database_sync_to_async(publish_access_changed)(user_ids={bob.pk})
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4013}


async def test_a_superuser_whose_flag_was_taken_away_is_an_ordinary_user_at_once(
    board: Any,
) -> None:
    alice = await database_sync_to_async(a_user)("alice", superuser=True)
    communicator, bridge = await open_socket(board, alice)
    await database_sync_to_async(get_user_model().objects.filter(pk=alice.pk).update)(
        is_superuser=False
    )
    reply = await bridge.call("get", key="k")
    assert reply["ok"] is False and reply["error"]["code"] == "not_found", reply
    await communicator.disconnect()
