"""The OpenAPI schema is as strict as the server, both ways: what the server refuses, the
schema forbids (bounds, lengths, patterns, required bodies), and what the schema forbids,
the server refuses with invalid_argument, writing nothing."""

from __future__ import annotations

import io
from typing import Any

from django.test import Client

from kanban.models import Project
from storage.namespaces import MAX_CONVERSATION_ID_LENGTH
from tests.api.conftest import People, client_for

SCHEMA_URL = "/api/v1/schema/?format=json"


def the_schema() -> dict[str, Any]:
    response = Client().get(SCHEMA_URL)
    assert response.status_code == 200
    schema: dict[str, Any] = response.json()
    return schema


def parameter(operation: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [each for each in operation["parameters"] if each["name"] == name]
    return found


def test_the_schema_states_the_bounds_lengths_and_patterns_the_server_checks(db: None) -> None:
    paths = the_schema()["paths"]
    kv_put = paths["/api/v1/projects/{project_id}/kv/{key}"]["put"]
    assert parameter(kv_put, "X-Conversation-Id")["schema"]["minLength"] == 1
    assert kv_put["requestBody"]["required"] is True
    history = paths["/api/v1/projects/{project_id}/history/kv/{key}"]["get"]
    assert parameter(history, "limit")["schema"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
    }
    inbox = paths["/api/v1/notifications/"]["get"]
    assert parameter(inbox, "limit")["schema"]["maximum"] == 100
    search = paths["/api/v1/search/cards"]["get"]
    assert parameter(search, "q")["schema"]["minLength"] == 1
    lines = paths["/api/v1/projects/{project_id}/knowledge/documents/{document_id}/lines"]["get"]
    assert parameter(lines, "start")["schema"]["minimum"] == 1
    assert parameter(lines, "document_id")["schema"]["pattern"].startswith("^")
    related = paths["/api/v1/projects/{project_id}/related/{alias}/kv/{key}"]["get"]
    assert parameter(related, "alias")["schema"]["pattern"] == "^(?:[a-z][a-z0-9_-]{0,63})$"
    member = paths["/api/v1/projects/{project_id}/members/{username}"]["put"]
    assert "pattern" in parameter(member, "username")["schema"]
    assert member["requestBody"]["required"] is True


def test_an_empty_sort_is_refused_not_taken_for_the_default(people: People) -> None:
    answer = client_for(people.alice).get("/api/v1/projects/?sort=")
    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid_argument" and answer.json()["field"] == "sort"


def test_marking_read_takes_no_body_or_an_object_never_null(people: People) -> None:
    alice = client_for(people.alice)
    url = "/api/v1/notifications/read"
    assert alice.post(url).json() == {"read": 0}
    for body in ('{"ids": null}', "null"):
        refused = alice.post(url, body, content_type="application/json")
        assert refused.status_code == 400, body
        assert refused.json()["code"] == "invalid_argument"


def test_a_configuration_name_past_its_length_is_refused_even_if_spaces_pad_it(
    people: People, board: Project
) -> None:
    url = f"/api/v1/projects/{board.id}/configurations/"
    alice = client_for(people.alice)
    padded = alice.post(url, {"name": "Mine" + " " * 100}, format="json")
    assert padded.status_code == 400 and padded.json()["field"] == "name"
    assert len(alice.get(url).json()["configurations"]) == 1  # the default alone
    assert alice.post(url, {"name": "  Mine  "}, format="json").status_code == 201


def test_a_file_part_without_a_file_name_is_the_file(people: People, board: Project) -> None:
    """RFC 7578 makes a part's file name optional; such a part arrives as text."""
    boundary = "b0und4ry"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="card"\r\n\r\nc1\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"\r\n\r\nhello\r\n'
        f"--{boundary}--\r\n"
    )
    made = client_for(people.bob).post(
        f"/api/v1/projects/{board.id}/attachments/",
        body,
        content_type=f"multipart/form-data; boundary={boundary}",
    )
    assert made.status_code == 201, made.json()
    assert made.json()["name"] == "file" and made.json()["size"] == 5


def test_a_conversation_id_as_long_as_the_limit_says_is_stored(
    people: People, board: Project
) -> None:
    """The limit once promised 256 characters, which the dataset's namespace then refused
    as "namespace is longer than 255 characters"."""
    alice = client_for(people.alice)
    longest = "c" * MAX_CONVERSATION_ID_LENGTH
    for domain in ("kv", "persistent-values"):
        url = f"/api/v1/projects/{board.id}/conversations/{longest}/{domain}/k"
        assert alice.put(url, {"value": 1}, format="json").status_code == 200, domain
        too_long = f"/api/v1/projects/{board.id}/conversations/{longest}c/{domain}/k"
        refused = alice.put(too_long, {"value": 1}, format="json")
        assert refused.status_code == 400 and refused.json()["field"] == "conversationId"


def test_an_alias_no_project_can_declare_is_unknown_even_with_a_nul_in_it(
    people: People, board: Project
) -> None:
    """A NUL in an upload's alias reached the relationship lookup: 503 from PostgreSQL."""
    for alias in ("in\x00ventory", "", "Inventory"):
        body = io.BytesIO(b"hello")
        body.name = "hello.txt"
        answer = client_for(people.bob).post(
            f"/api/v1/projects/{board.id}/attachments/",
            {"card": "c1", "alias": alias, "file": body},
            format="multipart",
        )
        assert answer.status_code == 404, (alias, answer.json())
        assert answer.json()["code"] == "unknown_alias"


def test_an_empty_cursor_and_an_edit_that_changes_nothing_are_refused(
    people: People, board: Project
) -> None:
    alice = client_for(people.alice)
    documents = f"/api/v1/projects/{board.id}/knowledge/documents/"
    assert alice.get(documents + "?cursor=").status_code == 400
    made = alice.post(documents, {"title": "T", "markdown": "m", "id": None}, format="json")
    assert made.status_code == 201
    edit = alice.patch(documents + made.json()["id"], {}, format="json")
    assert edit.status_code == 400 and edit.json()["code"] == "invalid_argument"
