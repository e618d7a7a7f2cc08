"""The inbox over REST: bob lists what alice sent him, pages through it and marks it read;
bad parameters get invalid_argument."""

from __future__ import annotations

from kanban.data.notifications import notification_send
from kanban.models import Project
from tests.api.conftest import People, client_for


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
