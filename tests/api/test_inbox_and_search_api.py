"""The inbox over REST: bob lists what alice sent him, pages through it and marks it read;
bad parameters get invalid_argument. And the search across boards, beside it."""

from __future__ import annotations

from rest_framework.test import APIClient

from kanban.accounts.tokens import token_create
from kanban.data.notifications import notification_send
from kanban.models import Project
from tests.api.conftest import People, client_for
from tests.factories import a_board, board_data


def test_bob_lists_pages_and_marks_read_what_alice_sent_him(people: People, board: Project) -> None:
    for n in range(3):
        notification_send(
            actor=people.alice, project_id=board.id, users=["bob"], text=f"n{n}", via="bridge"
        )
    bob = client_for(people.bob)
    page = bob.get("/api/v1/notifications/?limit=2").json()
    assert [item["text"] for item in page["notifications"]] == ["n2", "n1"]
    assert page["unread"] == 3 and page["notifications"][0]["sender"]["username"] == "alice"
    rest = bob.get(f"/api/v1/notifications/?before={page['cursor']}").json()
    assert [item["text"] for item in rest["notifications"]] == ["n0"] and rest["cursor"] is None

    first = page["notifications"][0]["id"]
    assert bob.post("/api/v1/notifications/read", {"ids": [first]}, format="json").json() == {
        "read": 1
    }
    assert bob.post("/api/v1/notifications/read", {}, format="json").json() == {"read": 2}
    assert bob.get("/api/v1/notifications/").json()["unread"] == 0
    assert client_for(people.alice).get("/api/v1/notifications/").json()["notifications"] == []


def test_bad_parameters_are_refused(people: People, board: Project) -> None:
    bob = client_for(people.bob)
    for query in ("limit=0", "limit=x", "limit=101", "before=-1", "page=2"):
        answer = bob.get(f"/api/v1/notifications/?{query}")
        assert (answer.status_code, answer.json()["code"]) == (400, "invalid_argument"), query
    answer = bob.post("/api/v1/notifications/read", {"ids": "all"}, format="json")
    assert (answer.status_code, answer.json()["code"]) == (400, "invalid_argument")


def test_search_finds_cards_over_rest_paged_and_in_the_schema(people: People) -> None:
    board = a_board(owner=people.alice, name="Roadmap")
    board_data(board, cards={"r1": {"title": "Beta launch"}})
    alice = client_for(people.alice)
    answer = alice.get("/api/v1/search/cards?q=LAUNCH&limit=5").json()
    assert [(r["card"]["id"], r["url"]) for r in answer["results"]] == [
        ("r1", f"/boards/{board.id}/#card=r1")
    ]
    assert client_for(people.bob).get("/api/v1/search/cards?q=launch").json()["results"] == []
    bad = alice.get("/api/v1/search/cards?q=")
    assert (bad.status_code, bad.json()["code"]) == (400, "invalid_argument")
    schema = alice.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    assert {"/api/v1/search/cards", "/api/v1/notifications/", "/api/v1/notifications/read"} <= set(
        schema["paths"]
    )


def test_ids_past_64_bits_are_refused_not_a_database_error(people: People, board: Project) -> None:
    bob = client_for(people.bob)
    huge = 2**63
    answer = bob.post("/api/v1/notifications/read", {"ids": [huge]}, format="json")
    assert (answer.status_code, answer.json()["code"]) == (400, "invalid_argument")
    listed = bob.get(f"/api/v1/notifications/?before={huge}")
    assert (listed.status_code, listed.json()["code"]) == (400, "invalid_argument")
    alice = client_for(people.alice)
    revoke = alice.delete(f"/api/v1/projects/{board.id}/invites/{huge}")
    assert (revoke.status_code, revoke.json()["code"]) == (400, "invalid_argument")


def test_a_project_scoped_token_searches_only_the_boards_it_reaches(people: People) -> None:
    """As the MCP tool does (one service): a token scoped to some boards finds cards on
    those, never on another board its user can read."""
    roadmap = a_board(owner=people.alice, name="Roadmap")
    ops = a_board(owner=people.alice, name="Ops")
    private = a_board(owner=people.alice, name="Private")
    for board in (roadmap, ops, private):
        board_data(board, cards={"c1": {"title": f"launch {board.name}"}})
    _, plaintext = token_create(
        user=people.alice, project_id=roadmap.id, more_project_ids=[ops.id], scope="read"
    )
    scoped = APIClient()
    scoped.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    answer = scoped.get("/api/v1/search/cards?q=launch")
    assert answer.status_code == 200, answer.content
    assert [r["board"]["name"] for r in answer.json()["results"]] == ["Ops", "Roadmap"]
    everything = client_for(people.alice).get("/api/v1/search/cards?q=launch").json()
    assert [r["board"]["name"] for r in everything["results"]] == ["Ops", "Private", "Roadmap"]
