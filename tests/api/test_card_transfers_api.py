"""Copy and move a card over REST: bob (developer on Launch and Ops) moves a card from
Launch to Ops; carol, a guest on Launch, cannot; a token for Launch alone does not reach
Ops."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from kanban.accounts.tokens import token_create
from kanban.data.board import layout
from kanban.models import Project
from storage import engine
from storage.namespaces import project_kv
from tests.api.conftest import client_for
from tests.factories import a_board, board_data, users

pytestmark = pytest.mark.django_db


@pytest.fixture
def boards() -> dict[str, Any]:
    alice, bob, carol = users("alice", "bob", "carol")
    launch = a_board(owner=alice, name="Launch", members={bob: "developer", carol: "guest"})
    ops = a_board(owner=alice, name="Ops", members={bob: "developer", carol: "developer"})
    board_data(launch, cards={"c1": {"title": "Broken login"}})
    return {"bob": bob, "carol": carol, "launch": launch, "ops": ops}


def post(client: APIClient, board: Project, card: str, verb: str, body: dict[str, Any]) -> Any:
    return client.post(f"/api/v1/projects/{board.id}/cards/{card}/{verb}", data=body, format="json")


def test_bob_moves_a_card_to_another_board(boards: dict[str, Any]) -> None:
    launch, ops = boards["launch"], boards["ops"]
    response = post(client_for(boards["bob"]), launch, "c1", "move", {"targetProject": str(ops.id)})
    assert response.status_code == 201, response.json()
    moved = response.json()
    assert moved["projectId"] == str(ops.id) and moved["moved"] is True
    stored = engine.get_value(project_kv(ops.id, layout.card_key(moved["card"])))
    assert stored is not None and stored.value["title"] == "Broken login"
    gone = engine.get_value(project_kv(launch.id, "card:c1"))
    assert gone is not None and gone.value == {"id": "c1", "deleted": True}


def test_carol_a_guest_cannot_move_but_copies(boards: dict[str, Any]) -> None:
    launch, ops = boards["launch"], boards["ops"]
    carol = client_for(boards["carol"])
    refused = post(carol, launch, "c1", "move", {"targetProject": str(ops.id)})
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    copied = post(carol, launch, "c1", "copy", {"targetProject": str(ops.id)})
    assert copied.status_code == 201 and copied.json()["moved"] is False


def test_a_token_for_one_board_does_not_reach_another(boards: dict[str, Any]) -> None:
    launch, ops = boards["launch"], boards["ops"]
    client = APIClient()
    _, plaintext = token_create(user=boards["bob"], project_id=launch.id)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    response = post(client, launch, "c1", "copy", {"targetProject": str(ops.id)})
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_a_bad_target_is_invalid(boards: dict[str, Any]) -> None:
    response = post(client_for(boards["bob"]), boards["launch"], "c1", "copy", {"targetProject": 7})
    assert response.status_code == 400 and response.json()["field"] == "targetProject"
