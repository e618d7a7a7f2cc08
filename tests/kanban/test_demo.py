"""The development demo: three people, Board and Inventory confirmed both ways, sample cards,
a note on the dashboard; and an empty-database-only, development-only loader."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from kanban.access import Op, access_project_data
from kanban.demo import demo_is_loaded, demo_load
from kanban.kv import project_kv_get
from kanban.models import Project
from storage.errors import KanbanError

pytestmark = pytest.mark.django_db


def test_the_demo_seeds_people_boards_cards_and_a_confirmed_relationship() -> None:
    logins = demo_load()
    assert [(login.username, login.role) for login in logins] == [
        ("alice", "owner"),
        ("bob", "developer"),
        ("carol", "guest"),
    ]
    board = Project.objects.get(name="Board")
    alice = get_user_model().objects.get(username="alice")
    cards = project_kv_get(user=alice, project_id=board.id, key="board:cards")
    assert cards is not None and len(cards.value) == 5
    stock = project_kv_get(user=alice, project_id=board.id, alias="inventory", key="stock:hinge")
    assert stock is not None and stock.value == {"name": "Hinge", "count": 24}
    carol = get_user_model().objects.get(username="carol")
    with pytest.raises(KanbanError):
        access_project_data(user=carol, consumer_id=board.id, alias=None, op=Op.SET, key="k")
    assert demo_is_loaded()
    assert demo_load() == [], "a second start leaves the database alone"


def test_the_dashboard_says_it_shows_demo_data(settings: Any) -> None:
    logins = demo_load()
    client = Client()
    assert client.login(username="alice", password=logins[0].password)
    page = client.get("/").content.decode()
    assert 'data-testid="demo-note"' in page and "Board" in page and "Inventory" in page


def test_the_demo_never_loads_in_production(settings: Any) -> None:
    settings.PRODUCTION = True
    with pytest.raises(KanbanError):
        demo_load()
    assert not get_user_model().objects.exists()
