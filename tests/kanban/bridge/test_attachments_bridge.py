"""Attachments through the bridge, as any plugin reaches them: a card's list and a delete
over the websocket (``attachments.list``, ``attachments.delete``), for the board's own
project or a related one under its grants; the upload through the REST upload with the
alias, which the board page's host uses. An upload never crosses the socket."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from PIL import Image

from kanban.access.grant_rules import ALL, Grant, Rule
from kanban.data.attachments import attachment_upload
from storage.kv import Dataset, kv_get
from tests.factories import a_declaration, a_project, users
from tests.kanban.bridge.helpers import Bridge, open_bridge

pytestmark = pytest.mark.django_db(transaction=True)

ATTACHMENTS = Rule("prefixes", ("attachments:",))


@pytest.fixture(autouse=True)
def files(settings: Any, tmp_path: Path) -> Path:
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    return tmp_path


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (20, 120, 200)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def world(transactional_db: None) -> dict[str, Any]:
    """alice owns the Board and the Wiki, bob develops on both, charlie is the Board's
    guest. The Wiki lets the Board read everything and write its cards' attachments."""
    alice, bob, charlie = users("alice", "bob", "charlie")
    board = a_project(name="Board", owner=alice, members={bob: "developer", charlie: "guest"})
    wiki = a_project(name="Wiki", owner=alice, members={bob: "developer"})
    a_declaration(board, "wiki", wiki)
    a_declaration(wiki, "board", board, Grant(read=ALL, write=ATTACHMENTS))
    return {"alice": alice, "bob": bob, "charlie": charlie, "board": board, "wiki": wiki}


def attach(world: dict[str, Any], who: str, project: str, card: str, data: bytes) -> Any:
    def upload() -> dict[str, Any]:
        return attachment_upload(
            user=world[who],
            project_id=world[project].id,
            card=card,
            name="shot.png",
            content_type="image/png",
            stream=io.BytesIO(data),
        )

    return database_sync_to_async(upload)()


async def on_board(world: dict[str, Any], who: str) -> Bridge:
    communicator, connected, _ = await open_bridge(world["board"], world[who])
    assert connected
    return Bridge(communicator)


@pytest.fixture
async def bob(world: dict[str, Any]) -> AsyncIterator[Bridge]:
    bridge = await on_board(world, "bob")
    yield bridge
    await bridge.communicator.disconnect()


@pytest.fixture
async def charlie(world: dict[str, Any]) -> AsyncIterator[Bridge]:
    bridge = await on_board(world, "charlie")
    yield bridge
    await bridge.communicator.disconnect()


def result(reply: dict[str, Any]) -> Any:
    assert reply["ok"], reply
    return reply["result"]


async def test_bob_lists_a_cards_attachments_and_removes_one_while_watchers_hear_it(
    world: dict[str, Any], bob: Bridge, charlie: Bridge
) -> None:
    attached = await attach(world, "bob", "board", "c1", png())
    assert result(await charlie.call("watch", value={"prefix": "attachments:"})) == {
        "watching": True
    }

    (listed,) = result(await bob.call("attachments.list", key="c1"))
    assert listed["id"] == attached["id"]
    assert listed["image"] == {"width": 64, "height": 48}
    assert listed["url"].startswith("/attachments/")
    assert listed["thumbnailUrl"].startswith("/attachments/")

    assert (
        result(await bob.call("attachments.delete", key="c1", value={"id": attached["id"]})) == {}
    )
    assert result(await bob.call("attachments.list", key="c1")) == []
    event = await charlie.event()
    assert event["event"] == "changes"
    assert event["changes"][0]["key"] == "attachments:c1"
    assert event["changes"][0]["deleted"] is True


async def test_charlie_a_guest_lists_and_downloads_but_may_not_remove(
    world: dict[str, Any], charlie: Bridge
) -> None:
    attached = await attach(world, "bob", "board", "c1", png())
    (listed,) = result(await charlie.call("attachments.list", key="c1"))

    def download() -> bytes:
        client = Client()
        client.force_login(world["charlie"])
        response = client.get(listed["thumbnailUrl"])
        assert response.status_code == 200
        return b"".join(response.streaming_content)  # type: ignore[attr-defined]

    assert (await database_sync_to_async(download)()).startswith(b"\x89PNG")
    refused = await charlie.call("attachments.delete", key="c1", value={"id": attached["id"]})
    assert refused["error"]["code"] == "forbidden"
    assert refused["error"]["message"] == "writing in this project needs the developer role"


async def test_through_an_alias_the_related_projects_grants_decide(
    world: dict[str, Any], bob: Bridge, charlie: Bridge
) -> None:
    attached = await attach(world, "bob", "wiki", "w1", png())
    (listed,) = result(await bob.call("attachments.list", alias="wiki", key="w1"))
    assert listed["id"] == attached["id"]
    denied = await charlie.call("attachments.delete", alias="wiki", key="w1", value={"id": "x"})
    assert (
        denied["error"]["message"]
        == "writing through 'wiki' needs the developer role in this project"
    )
    result(
        await bob.call("attachments.delete", alias="wiki", key="w1", value={"id": attached["id"]})
    )
    assert result(await bob.call("attachments.list", alias="wiki", key="w1")) == []


async def test_an_upload_never_comes_over_the_socket_and_a_delete_names_its_attachment(
    bob: Bridge,
) -> None:
    upload = await bob.call("attachments.upload", key="c1", value={"name": "a.png"})
    assert upload["error"] == {"code": "invalid_argument", "message": "unknown op", "field": "op"}
    nameless = await bob.call("attachments.delete", key="c1", value={})
    assert nameless["error"]["code"] == "invalid_argument"
    missing = await bob.call("attachments.delete", key="c1", value={"id": "0" * 32})
    assert missing["error"]["code"] == "not_found"


def board_upload(world: dict[str, Any], who: str, data: bytes, **fields: str) -> Any:
    """What the board page's host sends: the session, its CSRF token, the form."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(world[who])
    client.get(f"/boards/{world['board'].id}/")
    body = io.BytesIO(data)
    body.name = "shot.png"
    return client.post(
        f"/api/v1/projects/{world['board'].id}/attachments/",
        {"file": body, **fields},
        headers={"X-CSRFToken": client.cookies["csrftoken"].value},
    )


def test_the_hosts_upload_takes_the_alias_under_the_related_projects_grants(
    world: dict[str, Any],
) -> None:
    created = board_upload(world, "bob", png(), card="w1", alias="wiki")
    assert created.status_code == 201, created.json()
    stored = kv_get(dataset=Dataset(world["wiki"].id, "kv", None), key="attachments:w1")
    assert stored is not None
    assert [item["id"] for item in stored.value["attachments"]] == [created.json()["id"]]

    refused = board_upload(world, "charlie", png(), card="c1")
    assert refused.status_code == 403
    assert refused.json()["message"] == "writing in this project needs the developer role"
    unknown = board_upload(world, "bob", png(), card="c1", alias="nope")
    assert unknown.json()["code"] == "unknown_alias"


def test_the_board_page_tells_its_host_the_attachment_limit(
    world: dict[str, Any], settings: Any
) -> None:
    settings.KANBAN_ATTACHMENT_BYTES = 1234
    client = Client()
    client.force_login(world["bob"])
    page = client.get(f"/boards/{world['board'].id}/")
    assert '"attachmentBytes": 1234' in page.content.decode()
