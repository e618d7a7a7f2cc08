"""Personal access tokens on the account page: alice makes one (shown once), sees it
listed with when it was last used and when it expires, and revokes it; REST then refuses
it at once. What a token may do is never more than what its owner may."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from kanban.models import ApiToken, Project
from tests.factories import a_project

pytestmark = pytest.mark.django_db

PAGE = "/account/tokens"


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def make_token(client: Client, **form: str) -> str:
    page = client.post(
        PAGE, {"name": "script", "scope": "read", "expires": "30d", **form}, follow=True
    )
    assert page.status_code == 200, page.content
    found = re.search(rb'data-testid="token-plaintext">(kb_[^<]+)<', page.content)
    assert found, "the new token is shown on the page that made it"
    return found.group(1).decode()


def bearer(plaintext: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


def kv(project: Project, key: str = "k") -> str:
    return f"/api/v1/projects/{project.id}/kv/{key}"


def put(client: APIClient, where: str, value: Any) -> Any:
    return client.put(where, data=json.dumps({"value": value}), content_type="application/json")


@pytest.fixture
def boards(alice: Any) -> dict[str, Project]:
    return {
        "roadmap": a_project(name="Roadmap", owner=alice),
        "ops": a_project(name="Ops", owner=alice),
    }


def test_a_token_is_shown_once_and_only_its_hash_is_kept(alice: Any, boards: Any) -> None:
    page = signed_in(alice)
    plaintext = make_token(page, board=str(boards["roadmap"].id))

    stored = ApiToken.objects.get(user=alice)
    assert plaintext.startswith("kb_") and stored.digest != plaintext
    assert "kanban.token_created" not in page.session, "kept only until it was shown"
    assert stored.scope == "read" and stored.project == boards["roadmap"]
    assert stored.expires_at is not None
    listing = page.get(PAGE)
    assert plaintext.encode() not in listing.content, "never shown again"
    again = page.post(PAGE, {"name": "again", "scope": "read", "expires": "7d"})
    assert again.status_code == 302 and again["Location"] == PAGE, "a reload makes none"
    assert stored.prefix.encode() in listing.content and b"Never" in listing.content


def test_a_read_token_for_one_board_reads_it_and_nothing_else(alice: Any, boards: Any) -> None:
    roadmap, ops = boards["roadmap"], boards["ops"]
    put_by_session = APIClient()
    put_by_session.force_authenticate(alice)
    assert put(put_by_session, kv(roadmap), "hello").status_code == 200
    token = bearer(make_token(signed_in(alice), board=str(roadmap.id)))

    assert token.get(kv(roadmap)).json()["value"] == "hello"
    writing = put(token, kv(roadmap), "changed")
    assert writing.status_code == 403 and writing.json()["message"] == "this token is read-only"
    other = token.get(kv(ops))
    assert other.status_code == 404 and other.json()["code"] == "not_found"
    assert signed_in(alice).get(PAGE).content.count(b"just now") == 1, "last used, shown"


def test_revoked_is_refused_at_once(alice: Any, boards: Any) -> None:
    page = signed_in(alice)
    token = bearer(make_token(page, scope="write"))
    assert put(token, kv(boards["ops"]), 1).status_code == 200

    stored = ApiToken.objects.get(user=alice)
    revoked = page.post(f"{PAGE}/{stored.id}/revoke")
    assert revoked.status_code == 302

    refused = token.get(kv(boards["ops"]))
    assert refused.status_code == 401
    assert refused.json() == {
        "code": "unauthenticated",
        "message": "invalid, expired or revoked token",
    }
    assert stored.prefix.encode() not in page.get(PAGE).content


def test_nobody_revokes_another_persons_token(alice: Any, bob: Any, boards: Any) -> None:
    make_token(signed_in(alice))
    stored = ApiToken.objects.get(user=alice)

    assert signed_in(bob).post(f"{PAGE}/{stored.id}/revoke").status_code == 404
    assert ApiToken.objects.get(pk=stored.pk).revoked_at is None


def test_a_header_that_is_not_a_token_gets_a_clear_401(alice: Any, boards: Any) -> None:
    for header in ("Bearer nonsense", "Bearer kb_nonsense", "Bearer", "Bearer a b"):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=header)
        refused = client.get(kv(boards["ops"]))
        assert refused.status_code == 401, header
        assert refused.json()["code"] == "unauthenticated", header
        assert refused["WWW-Authenticate"] == 'Bearer realm="api"'


def test_a_token_never_does_more_than_its_owner(alice: Any, bob: Any, boards: Any) -> None:
    ops = boards["ops"]
    a_project(name="Guest board", owner=alice, members={bob: "guest"})
    guest_board = Project.objects.get(name="Guest board")
    token = bearer(make_token(signed_in(bob), scope="write"))

    refused = put(token, kv(guest_board), 1)
    assert refused.status_code == 403, "a guest's write token writes nothing"
    assert token.get(kv(ops)).status_code == 404, "nor reaches a board bob is not on"


def test_an_mcp_token_is_refused_over_rest(alice: Any, boards: Any) -> None:
    token = bearer(make_token(signed_in(alice), scope="mcp", board=str(boards["ops"].id)))

    refused = token.get(kv(boards["ops"]))
    assert refused.status_code == 403
    assert refused.json()["message"] == "this token is for MCP only; make a read or write one"


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"scope": "admin"}, b"scope must be read, write or mcp"),
        ({"expires": "forever"}, b"choose when the token expires"),
        ({"board": "not-a-board"}, b"choose some of your boards"),
    ],
)
def test_bad_input_writes_nothing(alice: Any, boards: Any, form: Any, message: bytes) -> None:
    page = signed_in(alice).post(PAGE, {"name": "x", "scope": "read", "expires": "7d", **form})

    assert page.status_code == 400 and message in page.content
    assert not ApiToken.objects.exists()


def test_a_token_for_two_of_three_boards_reads_both_and_not_the_third(
    alice: Any, boards: Any
) -> None:
    roadmap, ops = boards["roadmap"], boards["ops"]
    archive = a_project(name="Archive", owner=alice)
    by_session = APIClient()
    by_session.force_authenticate(alice)
    for board in (roadmap, ops, archive):
        assert put(by_session, kv(board), board.name).status_code == 200
    page = signed_in(alice)
    made = page.post(
        PAGE,
        {"name": "two", "scope": "read", "expires": "7d", "board": [str(ops.id), str(archive.id)]},
        follow=True,
    )
    found = re.search(rb'data-testid="token-plaintext">(kb_[^<]+)<', made.content)
    assert found, made.content
    token = bearer(found.group(1).decode())

    assert token.get(kv(ops)).json()["value"] == "Ops"
    assert token.get(kv(archive)).json()["value"] == "Archive"
    other = token.get(kv(roadmap))
    assert other.status_code == 404 and other.json()["code"] == "not_found"
    assert put(token, kv(ops), "changed").status_code == 403, "still read-only"
    assert b"Ops, Archive" in page.get(PAGE).content, "the list names both"


def test_an_mcp_token_names_one_board(alice: Any, boards: Any) -> None:
    third = a_project(name="Archive", owner=alice)
    page = signed_in(alice).post(
        PAGE,
        {"scope": "mcp", "expires": "7d", "board": [str(boards["ops"].id), str(third.id)]},
    )

    assert page.status_code == 400 and b"an MCP token names one board" in page.content
    assert not ApiToken.objects.exists()


def test_a_board_that_is_not_yours_cannot_be_chosen(alice: Any, bob: Any, boards: Any) -> None:
    page = signed_in(bob).post(
        PAGE, {"scope": "read", "expires": "7d", "board": str(boards["ops"].id)}
    )

    assert page.status_code == 400
    assert not ApiToken.objects.exists()
