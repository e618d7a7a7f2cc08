"""Named configurations over REST: each person manages their own, with one error shape, and
another person's configuration answers exactly like one that does not exist."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from rest_framework.test import APIClient

from kanban.models import Configuration, Project
from tests.api.conftest import People, client_for
from tests.factories import a_project

pytestmark = pytest.mark.django_db


def url(board: Project, *rest: str) -> str:
    return "/".join([f"/api/v1/projects/{board.id}/configurations", *rest, ""])


def post(client: APIClient, where: str, body: Any = None) -> Any:
    if body is None:
        return client.post(where)
    return client.post(where, data=json.dumps(body), content_type="application/json")


def patch(client: APIClient, where: str, body: Any) -> Any:
    return client.patch(where, data=json.dumps(body), content_type="application/json")


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body: dict[str, Any] = response.json()
    assert body["code"] == code
    assert isinstance(body["message"], str) and body["message"]
    return body


@pytest.fixture
def alice(people: People) -> APIClient:
    """Alice in a browser: a session, like the board's picker."""
    return client_for(people.alice, token=False)


def create(client: APIClient, board: Project, name: str, values: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name}
    if values is not None:
        body["values"] = values
    response = post(client, url(board), body)
    assert response.status_code == 201, response.content
    created: dict[str, Any] = response.json()
    return created


# --- the lifecycle ---------------------------------------------------------------------------


def test_a_new_person_sees_only_the_active_default(alice: APIClient, board: Project) -> None:
    response = alice.get(url(board))
    assert response.status_code == 200
    assert response.json() == {
        "activeId": "default",
        "configurations": [
            {
                "id": "default",
                "name": "Default",
                "values": {},
                "active": True,
                "createdAt": None,
                "updatedAt": None,
            }
        ],
    }
    assert alice.get(url(board, "default")).json()["name"] == "Default"


def test_alice_creates_reads_renames_and_deletes(alice: APIClient, board: Project) -> None:
    created = create(alice, board, "Sprint", {"wip": 3, "columns": ["todo", "done"]})
    assert uuid.UUID(created["id"])
    assert created["name"] == "Sprint"
    assert created["values"] == {"wip": 3, "columns": ["todo", "done"]}
    assert created["active"] is False
    assert created["createdAt"].endswith("+00:00")
    one = url(board, created["id"])
    assert alice.get(one).json() == created

    renamed = patch(alice, one, {"name": "Sprint 12"})
    assert renamed.status_code == 200
    assert renamed.json()["name"] == "Sprint 12"
    assert renamed.json()["values"] == created["values"]
    revalued = patch(alice, one, {"values": {"wip": 5}}).json()
    assert (revalued["name"], revalued["values"]) == ("Sprint 12", {"wip": 5})

    listed = alice.get(url(board)).json()
    assert [c["name"] for c in listed["configurations"]] == ["Default", "Sprint 12"]

    deleted = alice.delete(one)
    assert deleted.status_code == 200
    assert deleted.json()["deleted"] is True
    assert deleted.json()["active"]["id"] == "default"
    assert_error(alice.get(one), 404, "not_found")
    assert_error(alice.delete(one), 404, "not_found")


def test_values_are_optional_on_create(alice: APIClient, board: Project) -> None:
    assert create(alice, board, "Empty")["values"] == {}


def test_duplicating_with_and_without_a_name(alice: APIClient, board: Project) -> None:
    original = create(alice, board, "Sprint", {"wip": 2})
    copy = post(alice, url(board, original["id"], "duplicate"))
    assert copy.status_code == 201
    assert (copy.json()["name"], copy.json()["values"]) == ("Sprint (copy)", {"wip": 2})
    assert copy.json()["id"] != original["id"]
    named = post(alice, url(board, original["id"], "duplicate"), {"name": "Next"})
    assert named.status_code == 201 and named.json()["name"] == "Next"
    from_default = post(alice, url(board, "default", "duplicate"), {})
    assert from_default.json()["name"] == "Default (copy)"


def test_switching_and_switching_back_to_the_default(alice: APIClient, board: Project) -> None:
    one = create(alice, board, "One", {"n": 1})
    two = create(alice, board, "Two", {"n": 2})
    switched = post(alice, url(board, one["id"], "activate"))
    assert switched.status_code == 200
    assert switched.json()["id"] == one["id"] and switched.json()["active"] is True
    post(alice, url(board, two["id"], "activate"))
    listed = alice.get(url(board)).json()
    assert listed["activeId"] == two["id"]
    assert [c["active"] for c in listed["configurations"]] == [False, False, True]
    back = post(alice, url(board, "default", "activate"))
    assert back.json() == alice.get(url(board, "default")).json()
    assert back.json()["id"] == "default" and back.json()["active"] is True
    assert alice.get(url(board)).json()["activeId"] == "default"


def test_deleting_the_active_configuration_falls_back_to_the_default(
    alice: APIClient, board: Project
) -> None:
    made = create(alice, board, "Active")
    post(alice, url(board, made["id"], "activate"))
    deleted = alice.delete(url(board, made["id"])).json()
    assert deleted["active"]["id"] == "default" and deleted["active"]["active"] is True
    assert alice.get(url(board)).json()["activeId"] == "default"


def test_the_default_cannot_be_renamed_or_deleted(alice: APIClient, board: Project) -> None:
    """The request is well formed; what refuses it is that the default is built in: a
    conflict with the server's state (409), with its own code, and nothing changes."""
    before = alice.get(url(board)).json()
    renamed = assert_error(patch(alice, url(board, "default"), {"name": "Mine"}), 409, "built_in")
    deleted = assert_error(alice.delete(url(board, "default")), 409, "built_in")
    assert "Default" in renamed["message"] and "Default" in deleted["message"]
    assert alice.get(url(board)).json() == before


# --- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({}, 400, "invalid_argument"),
        ({"name": ""}, 400, "invalid_argument"),
        ({"name": None}, 400, "invalid_argument"),
        ({"name": "x" * 101}, 400, "invalid_argument"),
        ({"name": "Default"}, 400, "invalid_argument"),
        ({"name": "Ok", "values": None}, 400, "invalid_argument"),
        ({"name": "Ok", "values": [1, 2]}, 400, "invalid_argument"),
        ({"name": "Ok", "values": {"s": "x" * 70_000}}, 413, "too_large"),
        ({"name": "Ok", "active": True}, 400, "invalid_argument"),
        (["name"], 400, "invalid_argument"),
    ],
    ids=[
        "no-name",
        "empty-name",
        "null-name",
        "long-name",
        "reserved-name",
        "null-values",
        "list-values",
        "huge-values",
        "unknown-field",
        "not-an-object",
    ],
)
def test_a_bad_create_is_refused_and_stores_nothing(
    alice: APIClient, board: Project, body: Any, status: int, code: str
) -> None:
    assert_error(post(alice, url(board), body), status, code)
    assert not Configuration.objects.exists()


def test_malformed_json_and_nan_are_refused(alice: APIClient, board: Project) -> None:
    for text in ['{"name": "x"', '{"name": "x", "values": {"n": NaN}}']:
        response = alice.post(url(board), data=text, content_type="application/json")
        assert_error(response, 400, "invalid_argument")
    assert not Configuration.objects.exists()


def test_a_bad_update_changes_nothing(alice: APIClient, board: Project) -> None:
    made = create(alice, board, "Mine", {"a": 1})
    create(alice, board, "Taken")
    one = url(board, made["id"])
    assert_error(patch(alice, one, {"name": None}), 400, "invalid_argument")
    assert_error(patch(alice, one, {"values": "text"}), 400, "invalid_argument")
    assert_error(patch(alice, one, {"id": str(uuid.uuid4())}), 400, "invalid_argument")
    taken = assert_error(patch(alice, one, {"name": "Taken"}), 409, "conflict")
    assert taken["field"] == "name"
    assert alice.get(one).json() == made


def test_a_taken_name_is_a_conflict(alice: APIClient, board: Project) -> None:
    made = create(alice, board, "Mine")
    assert_error(post(alice, url(board), {"name": "Mine"}), 409, "conflict")
    duplicate = post(alice, url(board, made["id"], "duplicate"), {"name": "Mine"})
    assert_error(duplicate, 409, "conflict")


def test_activate_takes_no_body_fields(alice: APIClient, board: Project) -> None:
    made = create(alice, board, "Mine")
    refused = post(alice, url(board, made["id"], "activate"), {"id": made["id"]})
    assert_error(refused, 400, "invalid_argument")
    assert alice.get(url(board)).json()["activeId"] == "default"


def test_unsupported_methods_are_refused(alice: APIClient, board: Project) -> None:
    made = create(alice, board, "Mine")
    response = alice.put(
        url(board, made["id"]), data=json.dumps({"name": "x"}), content_type="application/json"
    )
    assert_error(response, 405, "invalid_argument")
    assert set(response["Allow"].replace(" ", "").split(",")) >= {"GET", "PATCH", "DELETE"}
    activate = alice.get(url(board, made["id"], "activate"))
    assert_error(activate, 405, "invalid_argument")
    assert "POST" in activate["Allow"]


def test_every_listed_id_is_a_path_that_reaches_it(alice: APIClient, board: Project) -> None:
    """The default is listed as "default", the id its path takes; a client that follows
    what it was listed reaches each configuration (``configurations//`` reached none)."""
    create(alice, board, "Sprint")
    listed = alice.get(url(board)).json()
    assert listed["activeId"] == "default"
    for item in listed["configurations"]:
        assert alice.get(url(board, item["id"])).json() == item


@pytest.mark.parametrize(
    "where", ["/configurations//", "/configurations/default/nothing/", "/nothing/"]
)
def test_a_path_the_api_does_not_have_is_a_json_not_found(
    alice: APIClient, board: Project, where: str
) -> None:
    response = alice.get(f"/api/v1/projects/{board.id}{where}")
    assert_error(response, 404, "not_found")
    assert response["Content-Type"] == "application/json"
    assert_error(alice.post("/api/v1/no-such-thing/"), 404, "not_found")


def test_a_path_short_of_its_trailing_slash_still_redirects_to_it(
    alice: APIClient, board: Project
) -> None:
    response = alice.get(f"/api/v1/projects/{board.id}/configurations")
    assert response.status_code == 301
    assert response["Location"] == f"/api/v1/projects/{board.id}/configurations/"


# --- who may ---------------------------------------------------------------------------------


def test_a_guest_manages_their_own_configurations(people: People, board: Project) -> None:
    charlie = client_for(people.charlie, token=False)
    made = create(charlie, board, "Guest view", {"compact": True})
    assert patch(charlie, url(board, made["id"]), {"name": "Compact"}).status_code == 200
    copy = post(charlie, url(board, made["id"], "duplicate")).json()
    assert post(charlie, url(board, copy["id"], "activate")).status_code == 200
    assert charlie.delete(url(board, made["id"])).status_code == 200
    listed = charlie.get(url(board)).json()
    assert [c["name"] for c in listed["configurations"]] == ["Default", "Compact (copy)"]
    assert listed["activeId"] == copy["id"]


def test_programs_with_a_token_reach_their_owners_configurations(
    people: People, board: Project
) -> None:
    made = create(client_for(people.bob, token=False), board, "Bob's")
    by_token = client_for(people.bob, token=True)
    assert by_token.get(url(board, made["id"])).json()["name"] == "Bob's"


def test_someone_outside_the_board_finds_nothing(people: People, board: Project) -> None:
    dave = client_for(people.dave, token=False)
    assert_error(dave.get(url(board)), 404, "not_found")
    assert_error(post(dave, url(board), {"name": "Mine"}), 404, "not_found")
    assert_error(post(dave, url(board, "default", "activate")), 404, "not_found")
    assert not Configuration.objects.exists()


def test_a_workflow_project_has_no_configurations(people: People) -> None:
    workflow = a_project(name="Pipeline", type="workflow", owner=people.alice)
    alice = client_for(people.alice, token=False)
    assert_error(alice.get(url(workflow)), 404, "not_found")


def test_nobody_signed_in_is_unauthenticated(board: Project) -> None:
    assert_error(APIClient().get(url(board)), 401, "unauthenticated")
    assert_error(post(APIClient(), url(board), {"name": "x"}), 401, "unauthenticated")


def test_a_session_write_needs_the_csrf_token(people: People, board: Project) -> None:
    """The picker sends ``X-CSRFToken``; a forged cross-site form post has none."""
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(people.alice)
    assert_error(post(browser, url(board), {"name": "Forged"}), 403, "forbidden")
    page = browser.get(f"/boards/{board.id}/")
    token = page.cookies["csrftoken"].value
    accepted = browser.post(
        url(board),
        data=json.dumps({"name": "Mine"}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert accepted.status_code == 201, accepted.content


# --- isolation -------------------------------------------------------------------------------

ATTEMPTS: dict[str, tuple[str, tuple[str, ...], Any]] = {
    "get": ("get", (), None),
    "rename": ("patch", (), {"name": "Stolen"}),
    "change values": ("patch", (), {"values": {"x": 1}}),
    "delete": ("delete", (), None),
    "duplicate": ("post", ("duplicate",), None),
    "duplicate named": ("post", ("duplicate",), {"name": "Stolen"}),
    "activate": ("post", ("activate",), None),
}


@pytest.mark.parametrize("attempt", list(ATTEMPTS))
def test_bob_gets_the_same_not_found_for_alices_configuration_as_for_none(
    people: People, alice: APIClient, board: Project, attempt: str
) -> None:
    hers = create(alice, board, "Hers", {"secret": "plans"})
    hers = post(alice, url(board, hers["id"], "activate")).json()
    bob = client_for(people.bob, token=False)
    method, rest, body = ATTEMPTS[attempt]

    def attempt_on(configuration_id: str) -> Any:
        where = url(board, configuration_id, *rest)
        if body is None:
            return getattr(bob, method)(where)
        return getattr(bob, method)(where, data=json.dumps(body), content_type="application/json")

    on_hers = attempt_on(hers["id"])
    on_nothing = attempt_on(str(uuid.uuid4()))
    on_garbage = attempt_on("not-a-uuid")
    assert_error(on_hers, 404, "not_found")
    assert on_hers.json() == on_nothing.json() == on_garbage.json()
    assert on_hers.status_code == on_nothing.status_code == on_garbage.status_code
    assert b"plans" not in on_hers.content
    # Alice's configuration is as she left it; bob's view is untouched too.
    assert alice.get(url(board, hers["id"])).json() == hers
    assert alice.get(url(board)).json()["activeId"] == hers["id"]
    assert [c["id"] for c in bob.get(url(board)).json()["configurations"]] == ["default"]


def test_lists_show_only_ones_own(people: People, alice: APIClient, board: Project) -> None:
    create(alice, board, "Alice's")
    bob = client_for(people.bob, token=False)
    create(bob, board, "Bob's")
    assert [c["name"] for c in bob.get(url(board)).json()["configurations"]] == [
        "Default",
        "Bob's",
    ]


# --- the schema ------------------------------------------------------------------------------


def test_the_openapi_schema_documents_every_configuration_endpoint(alice: APIClient) -> None:
    schema = alice.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    base = "/api/v1/projects/{project_id}/configurations/"
    one = base + "{configuration_id}/"
    operations = {
        (path, method): operation["operationId"]
        for path, item in schema["paths"].items()
        if path.startswith(base)
        for method, operation in item.items()
        if method != "parameters"
    }
    assert operations == {
        (base, "get"): "configurations_list",
        (base, "post"): "configurations_create",
        (one, "get"): "configuration_get",
        (one, "patch"): "configuration_update",
        (one, "delete"): "configuration_delete",
        (one + "duplicate/", "post"): "configuration_duplicate",
        (one + "activate/", "post"): "configuration_activate",
    }
    configuration = schema["components"]["schemas"]["Configuration"]
    assert set(configuration["properties"]) == {
        "id",
        "name",
        "values",
        "active",
        "createdAt",
        "updatedAt",
    }
