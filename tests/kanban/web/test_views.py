"""The board host page opens with the person's active configuration."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from kanban.access.memberships import membership_set
from kanban.data.configurations import configuration_activate, configuration_create
from kanban.models import Project
from tests.factories import a_project, a_user
from tests.kanban.conftest import MakeProject

pytestmark = pytest.mark.django_db


@pytest.fixture
def board(make_project: MakeProject, alice: Any, bob: Any) -> Project:
    project = make_project("Roadmap")
    membership_set(user=alice, project=project, role="owner")
    membership_set(user=bob, project=project, role="guest")
    return project


def board_data(user: Any, board: Project) -> dict[str, Any]:
    client = Client()
    client.force_login(user)
    response = client.get(f"/boards/{board.id}/")
    assert response.status_code == 200
    assert response.cookies["csrftoken"].value, "the picker needs the CSRF cookie"
    found = re.search(
        r'<script id="board-data" type="application/json">(.*?)</script>',
        response.content.decode(),
        re.S,
    )
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_the_board_opens_with_the_default_when_nothing_is_active(
    alice: Any, board: Project
) -> None:
    assert board_data(alice, board)["configuration"] == {"id": "", "name": "Default", "values": {}}


def test_the_board_opens_with_the_persons_own_active_configuration(
    alice: Any, bob: Any, board: Project
) -> None:
    values = {"wip": 3, "note": "</script><script>alert(1)</script>"}
    made = configuration_create(user=alice, project_id=board.id, name="Sprint", values=values)
    configuration_activate(user=alice, project_id=board.id, configuration_id=made.id)
    assert board_data(alice, board)["configuration"] == {
        "id": made.id,
        "name": "Sprint",
        "values": values,
    }
    assert board_data(bob, board)["configuration"]["id"] == ""


def test_the_board_page_tells_the_plugin_who_is_looking_and_what_they_may_do(
    alice: Any, bob: Any, board: Project
) -> None:
    assert board_data(bob, board)["context"]["role"] == "guest"
    assert board_data(bob, board)["context"]["can"] == {"read": True, "write": False}
    assert board_data(alice, board)["context"]["can"]["write"] is True


def test_the_favicon_is_the_static_icon(client: Client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"].endswith("/kanban/favicon.svg")
    page = client.get("/accounts/login/").content.decode()
    assert 'rel="icon"' in page


@pytest.mark.parametrize("debug", [True, False])
def test_a_board_you_cannot_open_is_the_products_own_404_page_even_in_development(
    settings: Any, debug: bool
) -> None:
    """Django's debug 404 page lists every URL pattern; a person just removed from a board
    reloading it must see the product's page instead."""
    from django.test import Client

    settings.DEBUG = debug
    board = a_project(name="Secret")
    client = Client()
    client.force_login(a_user("mallory"))
    for path in (f"/boards/{board.id}/", f"/boards/{board.id}/members/"):
        response = client.get(path)
        page = response.content.decode()
        assert response.status_code == 404, path
        assert 'data-testid="not-found"' in page and "URLconf" not in page, path
        assert "Secret" not in page, "nothing says the board exists"
