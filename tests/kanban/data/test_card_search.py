"""Search across boards: alice finds cards by title, description and comments on every
Board she can read, and nothing of a board she is not on; a query too wide for its budget
stops with too_large; pages follow each other without a gap."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from kanban.access.memberships import membership_set
from kanban.data.board.search import cards_search
from kanban.models import Project
from storage.errors import ErrorCode, KanbanError
from tests.factories import a_board, board_data, users

pytestmark = pytest.mark.django_db


@pytest.fixture
def people() -> dict[str, Any]:
    alice, bob = users("alice", "bob")
    return {"alice": alice, "bob": bob}


def board_with(owner: Any, name: str, cards: dict[str, dict[str, Any]]) -> Project:
    board = a_board(owner=owner, name=name)
    board_data(board, cards=cards)
    return board


def found(user: Any, query: str, **extra: Any) -> list[tuple[str, str, str]]:
    answer = cards_search(user=user, query=query, **extra)
    return [(r["board"]["name"], r["card"]["id"], r["matched"]) for r in answer["results"]]


def test_alice_finds_cards_by_title_description_and_comment_on_every_board_of_hers(
    people: dict[str, Any],
) -> None:
    alice, bob = people["alice"], people["bob"]
    launch = board_with(alice, "Launch", {"a1": {"title": "Press kit"}, "a2": {"title": "Site"}})
    board_data(
        launch, comments={"a2": [{"id": "m1", "author": "bob", "text": "Needs the PRESS photos"}]}
    )
    board_with(alice, "Hiring", {"h1": {"title": "Interviews", "description": "press on"}})
    secret = board_with(bob, "Bob's own", {"b1": {"title": "Press release"}})

    assert found(alice, "press") == [
        ("Hiring", "h1", "description"),
        ("Launch", "a1", "title"),
        ("Launch", "a2", "comment"),
    ]
    assert found(alice, "press photos") == [("Launch", "a2", "comment")], "every word"
    assert found(bob, "press") == [("Bob's own", "b1", "title")]
    result = cards_search(user=alice, query="kit")["results"][0]
    assert result["url"] == f"/boards/{launch.id}/#card=a1"
    membership_set(user=alice, project=secret, role="guest")
    assert ("Bob's own", "b1", "title") in found(alice, "press")


def test_a_comment_the_cards_dialog_skips_is_not_found(people: dict[str, Any]) -> None:
    alice = people["alice"]
    board = board_with(alice, "Launch", {"a1": {"title": "Site"}})
    shown = {"id": "m1", "author": "alice", "text": "Ship on Friday"}
    shadow = {"id": "m1", "author": "bob", "text": "Ship on Monday, approved"}  # its id again
    board_data(board, comments={"a1": [shown, shadow, {"text": "approved, no id"}]})
    assert found(alice, "friday") == [("Launch", "a1", "comment")]
    assert found(alice, "approved") == []


def test_pages_follow_each_other_and_bad_input_is_refused(people: dict[str, Any]) -> None:
    alice = people["alice"]
    board_with(alice, "Many", {f"c{n}": {"title": f"Task {n}"} for n in range(5)})
    first = cards_search(user=alice, query="task", limit=2)
    second = cards_search(user=alice, query="task", limit=2, cursor=first["cursor"])
    third = cards_search(user=alice, query="task", limit=2, cursor=second["cursor"])
    ids = [r["card"]["id"] for page in (first, second, third) for r in page["results"]]
    assert ids == ["c0", "c1", "c2", "c3", "c4"] and third["cursor"] is None
    for query, extra in (("", {}), ("x" * 201, {}), ("a\x00", {}), ("a", {"limit": 0})):
        with pytest.raises(KanbanError) as refused:
            cards_search(user=alice, query=query, **extra)
        assert refused.value.code == ErrorCode.INVALID_ARGUMENT


@override_settings(KANBAN_SEARCH_BUDGET_CHARS=2_000)
def test_a_search_past_its_budget_stops_with_too_large(people: dict[str, Any]) -> None:
    alice = people["alice"]
    board_with(
        alice, "Big", {f"c{n}": {"title": f"Task {n}", "description": "x" * 300} for n in range(10)}
    )
    with pytest.raises(KanbanError) as refused:
        cards_search(user=alice, query="nothing matches")
    assert refused.value.code == ErrorCode.TOO_LARGE
