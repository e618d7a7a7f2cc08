"""A key's history over REST: every version newest first with who wrote it, paged with a
cursor, under the key's own read rule (a rule that hides a key hides its history)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest

from kanban.access.grant_rules import Grant, Rule
from kanban.models import Project
from tests.api.conftest import People, client_for
from tests.factories import a_board, a_mutual_relationship, a_project

pytestmark = pytest.mark.django_db


def history_url(project: Project, key: str, *, alias: str | None = None, **query: Any) -> str:
    base = f"/api/v1/projects/{project.id}/"
    if alias:
        base += f"related/{alias}/"
    url = base + f"history/kv/{quote(key, safe='')}"
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def put(client: Any, project: Project, key: str, value: Any) -> str:
    url = f"/api/v1/projects/{project.id}/kv/{quote(key, safe='')}"
    response = client.put(url, data=json.dumps({"value": value}), content_type="application/json")
    assert response.status_code == 200, response.content
    return str(response.json()["revision"])


def test_every_write_and_the_delete_are_kept_newest_first_with_their_source(
    people: People, board: Project
) -> None:
    alice, bob = client_for(people.alice), client_for(people.bob)
    first = put(alice, board, "card:1", {"title": "One"})
    second = put(bob, board, "card:1", {"title": "Two"})
    assert bob.delete(f"/api/v1/projects/{board.id}/kv/card%3A1").json() == {"deleted": True}

    body = client_for(people.charlie).get(history_url(board, "card:1")).json()  # a guest reads
    deleted, two, one = body["entries"]
    assert deleted["deleted"] is True and "value" not in deleted
    assert deleted["source"]["user"] == "bob" and deleted["source"]["via"] == "api"
    assert (two["revision"], two["value"], two["source"]["user"]) == (
        second,
        {"title": "Two"},
        "bob",
    )
    assert (one["revision"], one["value"], one["source"]["user"]) == (
        first,
        {"title": "One"},
        "alice",
    )
    assert one["writtenAt"].endswith("+00:00")
    assert body["cursor"] is None


def test_the_history_pages_with_its_cursor(people: People, board: Project) -> None:
    bob = client_for(people.bob)
    revisions = [put(bob, board, "k", n) for n in range(5)]
    page = bob.get(history_url(board, "k", limit=2)).json()
    assert [e["revision"] for e in page["entries"]] == revisions[::-1][:2]
    rest = bob.get(history_url(board, "k", limit=10, before=page["cursor"])).json()
    assert [e["value"] for e in rest["entries"]] == [2, 1, 0] and rest["cursor"] is None
    for bad in ({"limit": 0}, {"limit": 101}, {"limit": "x"}, {"before": "abc"}, {"after": 1}):
        response = bob.get(history_url(board, "k", **bad))
        assert response.status_code == 400 and response.json()["code"] == "invalid_argument"


def test_a_revision_past_64_bits_is_refused_not_a_database_error(
    people: People, board: Project
) -> None:
    """Twenty digits fit the revision's length but no seq column: schemathesis found
    ``before=10000000000000000000`` answered 503 on SQLite, which cannot bind it."""
    bob = client_for(people.bob)
    put(bob, board, "k", 1)
    huge = str(2**63)
    history = bob.get(history_url(board, "k", before=huge))
    assert (history.status_code, history.json()["code"]) == (400, "invalid_argument")
    write = bob.put(
        f"/api/v1/projects/{board.id}/kv/k",
        data=json.dumps({"value": 2, "expectedRevision": huge}),
        content_type="application/json",
    )
    assert (write.status_code, write.json()["code"]) == (400, "invalid_argument")
    assert bob.get(history_url(board, "k", before=str(2**63 - 1))).status_code == 200


def test_retention_keeps_kanban_history_revisions(
    people: People, board: Project, settings: Any
) -> None:
    settings.KANBAN_HISTORY_REVISIONS = 3
    bob = client_for(people.bob)
    revisions = [put(bob, board, "k", n) for n in range(6)]
    entries = bob.get(history_url(board, "k", limit=100)).json()["entries"]
    assert [e["revision"] for e in entries] == revisions[::-1][:3]


def test_a_read_rule_that_hides_a_key_hides_its_history(people: People, board: Project) -> None:
    inventory = a_project(name="Inventory", owner=people.alice, members={people.bob: "developer"})
    a_mutual_relationship(
        board,
        inventory,
        a_calls_b="inventory",
        b_calls_a="board",
        grant=Grant(read=Rule("prefixes", ("stock:",))),
    )
    alice, bob = client_for(people.alice), client_for(people.bob)
    put(alice, inventory, "secret", "payroll")
    put(alice, inventory, "stock:nut", 5)
    opened = bob.get(history_url(board, "stock:nut", alias="inventory")).json()
    assert [e["value"] for e in opened["entries"]] == [5]
    hidden = bob.get(history_url(board, "secret", alias="inventory"))
    assert hidden.status_code == 403 and hidden.json()["code"] == "forbidden"
    assert "payroll" not in hidden.content.decode()
    outsider = client_for(people.dave).get(history_url(board, "k"))
    assert outsider.status_code == 404


def test_the_history_endpoint_is_in_the_schema(people: People) -> None:
    schema = client_for(people.alice).get("/api/v1/schema/?format=json").json()
    assert "/api/v1/projects/{project_id}/history/kv/{key}" in schema["paths"]


def test_a_guest_reads_a_boards_comments_but_not_their_history_with_deleted_ones(
    people: People,
) -> None:
    board = a_board(owner=people.alice, members={people.bob: "developer", people.charlie: "guest"})
    bob, charlie = client_for(people.bob), client_for(people.charlie)
    regret = {"id": "b1", "author": "bob", "text": "Oops.", "at": "2026-12-01", "edited": None}
    put(bob, board, "comments:c1", [regret])
    put(bob, board, "comments:c1", [])
    refused = charlie.get(history_url(board, "comments:c1"))
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    assert "Oops." not in refused.content.decode()
    got = charlie.get(f"/api/v1/projects/{board.id}/kv/comments%3Ac1")
    assert got.status_code == 200 and got.json()["value"] == []
    kept = bob.get(history_url(board, "comments:c1")).json()["entries"]
    assert [entry["value"] for entry in kept] == [[], [regret]]
