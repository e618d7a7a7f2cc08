"""The development demo: three people, Board and Inventory confirmed both ways, sample cards,
a note on the dashboard; and an empty-database-only, development-only loader."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from kanban.access.decision import Op, access_project_data
from kanban.data.demo import demo_board_fill, demo_is_loaded, demo_load, demo_ranks
from kanban.data.kv import project_kv_get
from kanban.data.target import Target
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
    cards = project_kv_get(target=Target(user=alice, project_id=board.id), key="board:cards")
    assert cards is not None and len(cards.value) == 5
    stock = project_kv_get(
        target=Target(user=alice, project_id=board.id, alias="inventory"), key="stock:hinge"
    )
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


RANK = re.compile(r"[0-9a-z]*[1-9a-z]")  # bridge_js/plugins/board/board-core.js's RANK_RE


def board_cards(board: Project) -> list[dict[str, Any]]:
    alice = get_user_model().objects.get(username="alice")
    index = project_kv_get(target=Target(user=alice, project_id=board.id), key="board:cards")
    assert index is not None
    cards = [
        project_kv_get(target=Target(user=alice, project_id=board.id), key=f"card:{i}")
        for i in index.value
    ]
    assert all(card is not None for card in cards), "the index names only stored cards"
    return [card.value for card in cards if card is not None]


def test_demo_cards_carry_the_boards_string_ranks_so_one_fits_between_any_two() -> None:
    demo_load()
    cards = board_cards(Project.objects.get(name="Board"))
    for column in ("todo", "doing", "done"):
        ranks = [c["rank"] for c in cards if c["column"] == column]
        assert all(isinstance(r, str) and RANK.fullmatch(r) for r in ranks), ranks
        assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)


def test_ranks_are_evenly_spaced_and_ordered_at_any_count() -> None:
    for count in (1, 2, 5, 36, 1000, 5000):
        ranks = demo_ranks(count)
        assert len(set(ranks)) == count and ranks == sorted(ranks)
        assert all(RANK.fullmatch(r) for r in ranks)


def test_board_cards_fills_a_fresh_demo_and_then_an_existing_one() -> None:
    assert demo_board_fill(cards=1000) == 995
    board = Project.objects.get(name="Board")
    cards = board_cards(board)
    assert len(cards) == 1000
    by_column = {
        c: [card for card in cards if card["column"] == c] for c in ("todo", "doing", "done")
    }
    assert all(len(column) > 300 for column in by_column.values()), "spread over the columns"
    for column in by_column.values():
        ranks = [card["rank"] for card in column]
        assert len(set(ranks)) == len(ranks)
    assert demo_board_fill(cards=1000) == 0, "already that big: nothing added"
    assert demo_board_fill(cards=1200) == 200
    assert len({card["id"] for card in board_cards(board)}) == 1200, "200 new cards, none twice"


def test_the_command_takes_board_cards() -> None:
    out = io.StringIO()
    call_command("demo_data", "--board-cards", "20", stdout=out)
    assert "15 more card(s)" in out.getvalue()
    with pytest.raises(CommandError):
        call_command("demo_data", "--board-cards", "-1")
