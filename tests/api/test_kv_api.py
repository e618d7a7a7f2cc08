"""The REST "Server connection" for KV and PersistentValue: every endpoint, every role,
every error code, with one error shape throughout."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from rest_framework.test import APIClient

from kanban.access.grant_rules import ALL, NONE, Grant, Rule
from kanban.access.relationships import relationship_remove
from kanban.models import Project
from tests.api.conftest import READ_WRITE, People, client_for
from tests.factories import a_board, a_declaration, a_mutual_relationship, a_project

pytestmark = pytest.mark.django_db


def kv_url(project: Project, key: str, *, base: str = "kv") -> str:
    return f"/api/v1/projects/{project.id}/{base}/{quote(key, safe='')}"


def put(client: APIClient, url: str, body: Any) -> Any:
    return client.put(url, data=json.dumps(body), content_type="application/json")


def assert_error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["code"] == code
    assert isinstance(body["message"], str) and body["message"]
    assert "Traceback" not in response.content.decode()


# --- the happy path ------------------------------------------------------------------------


def test_a_developer_puts_gets_and_deletes_a_value(people: People, board: Project) -> None:
    bob = client_for(people.bob)
    url = kv_url(board, "cards/42:title")
    written = put(bob, url, {"value": {"title": "Ship it", "n": 1.0}})
    assert written.status_code == 200
    revision = written.json()["revision"]
    got = bob.get(url).json()
    assert got["key"] == "cards/42:title"
    assert got["value"] == {"title": "Ship it", "n": 1.0}
    assert got["revision"] == revision
    assert got["updatedAt"].endswith("+00:00")
    assert got["source"]["via"] == "api" and got["source"]["user"] == "bob"
    assert got["source"]["consumerProject"] == str(board.id)
    assert bob.delete(url).json() == {"deleted": True}
    assert bob.delete(url).json() == {"deleted": False}
    assert_error(bob.get(url), 404, "not_found")


def test_a_stored_null_is_found_while_an_absent_key_is_not(people: People, board: Project) -> None:
    alice = client_for(people.alice)
    put(alice, kv_url(board, "nothing"), {"value": None})
    assert alice.get(kv_url(board, "nothing")).json()["value"] is None
    assert_error(alice.get(kv_url(board, "never")), 404, "not_found")


def test_compare_and_set_over_rest(people: People, board: Project) -> None:
    bob = client_for(people.bob)
    url = kv_url(board, "counter")
    first = put(bob, url, {"value": 1, "expectedRevision": None}).json()["revision"]
    refused = put(bob, url, {"value": 9, "expectedRevision": None})
    assert_error(refused, 409, "conflict")
    assert refused.json()["current"] == {"found": True, "value": 1, "revision": first}
    second = put(bob, url, {"value": 2, "expectedRevision": first})
    assert second.status_code == 200
    stale = put(bob, url, {"value": 3, "expectedRevision": first})
    assert_error(stale, 409, "conflict")
    assert stale.json()["current"]["value"] == 2
    assert bob.get(url).json()["value"] == 2


def test_the_four_datasets_are_separate_over_rest(people: People, board: Project) -> None:
    bob = client_for(people.bob)
    urls = [
        kv_url(board, "k"),
        f"/api/v1/projects/{board.id}/conversations/c1/kv/k",
        kv_url(board, "k", base="persistent-values"),
        f"/api/v1/projects/{board.id}/conversations/c1/persistent-values/k",
    ]
    for n, url in enumerate(urls):
        assert put(bob, url, {"value": n}).status_code == 200
    assert [bob.get(url).json()["value"] for url in urls] == [0, 1, 2, 3]
    assert bob.get(urls[1]).json()["source"]["conversationId"] == "c1"


# --- who may do what -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "read", "write"),
    [
        ("alice", 200, 200),
        ("bob", 200, 200),
        ("charlie", 200, 403),
        ("dave", 404, 404),
    ],
)
def test_roles_decide_reads_and_writes(
    people: People, board: Project, who: str, read: int, write: int
) -> None:
    put(client_for(people.alice), kv_url(board, "k"), {"value": "v"})
    client = client_for(getattr(people, who))
    assert client.get(kv_url(board, "k")).status_code == read
    assert put(client, kv_url(board, "k"), {"value": "w"}).status_code == write
    assert client.delete(kv_url(board, "k")).status_code == write
    codes = {403: "forbidden", 404: "not_found"}
    if write in codes:
        assert put(client, kv_url(board, "k"), {"value": 1}).json()["code"] == codes[write]


def test_anonymous_and_bad_tokens_are_unauthenticated(people: People, board: Project) -> None:
    assert_error(APIClient().get(kv_url(board, "k")), 401, "unauthenticated")
    forged = APIClient()
    forged.credentials(HTTP_AUTHORIZATION="Bearer kb_not-a-real-token")
    assert_error(forged.get(kv_url(board, "k")), 401, "unauthenticated")
    malformed = APIClient()
    malformed.credentials(HTTP_AUTHORIZATION="Bearer")
    assert_error(malformed.get(kv_url(board, "k")), 401, "unauthenticated")


def test_a_revoked_token_stops_working(people: People, board: Project) -> None:
    from kanban.accounts.tokens import token_revoke
    from kanban.models.tokens import ApiToken

    client = client_for(people.bob)
    assert put(client, kv_url(board, "k"), {"value": 1}).status_code == 200
    token_revoke(token=ApiToken.objects.get(user=people.bob))
    assert_error(client.get(kv_url(board, "k")), 401, "unauthenticated")


def test_session_writes_need_csrf(people: People, board: Project) -> None:
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(people.bob)
    assert browser.get(kv_url(board, "k")).status_code == 404
    assert_error(put(browser, kv_url(board, "k"), {"value": 1}), 403, "forbidden")
    assert_error(browser.get(kv_url(board, "k")), 404, "not_found")


def test_an_unknown_project_looks_like_one_you_do_not_belong_to(people: People) -> None:
    client = client_for(people.bob)
    response = client.get("/api/v1/projects/00000000-0000-4000-8000-000000000000/kv/k")
    assert_error(response, 404, "not_found")


# --- bad input writes nothing --------------------------------------------------------------


def test_key_of_1024_is_accepted_and_1025_refused(people: People, board: Project) -> None:
    bob = client_for(people.bob)
    assert put(bob, kv_url(board, "k" * 1024), {"value": 1}).status_code == 200
    assert_error(put(bob, kv_url(board, "k" * 1025), {"value": 1}), 400, "invalid_argument")


def test_value_size_limit_is_exact_over_rest(people: People, board: Project, settings: Any) -> None:
    settings.KANBAN_MAX_VALUE_BYTES = 4096
    bob = client_for(people.bob)
    at_limit = "x" * 4094
    assert put(bob, kv_url(board, "big"), {"value": at_limit}).status_code == 200
    assert_error(put(bob, kv_url(board, "big"), {"value": at_limit + "x"}), 413, "too_large")
    assert bob.get(kv_url(board, "big")).json()["value"] == at_limit


def test_a_body_far_over_the_limit_is_refused_before_parsing(
    people: People, board: Project, settings: Any
) -> None:
    settings.KANBAN_MAX_VALUE_BYTES = 1024
    bob = client_for(people.bob)
    huge = '{"value": "' + "x" * 200_000 + '"}'
    response = bob.put(kv_url(board, "huge"), data=huge, content_type="application/json")
    assert_error(response, 413, "too_large")


@pytest.mark.parametrize(
    "body",
    [
        '{"value": NaN}',
        '{"value": Infinity}',
        '{"value": 1',
        "[1, 2]",
        '{"valu": 1}',
        '{"value": 1, "projectId": "x"}',
        '{"value": 1, "expectedRevision": 7}',
        '{"value": 1, "expectedRevision": "not-a-revision"}',
        "\xff\xfe",
    ],
)
def test_malformed_bodies_are_invalid_argument_and_write_nothing(
    people: People, board: Project, body: str
) -> None:
    bob = client_for(people.bob)
    response = bob.put(kv_url(board, "k"), data=body, content_type="application/json")
    assert_error(response, 400, "invalid_argument")
    assert bob.get(kv_url(board, "k")).status_code == 404


def test_depth_64_is_accepted_and_65_refused_over_rest(people: People, board: Project) -> None:
    bob = client_for(people.bob)
    assert (
        put(bob, kv_url(board, "d"), {"value": json.loads("[" * 64 + "]" * 64)}).status_code == 200
    )
    deeper = put(bob, kv_url(board, "d2"), {"value": json.loads("[" * 65 + "]" * 65)})
    assert_error(deeper, 400, "invalid_argument")


# --- related projects by alias -------------------------------------------------------------


@pytest.fixture
def hierarchy(people: People) -> dict[str, Project]:
    """The seed's parent / child / grandchild with adjacent relationships only."""
    parent, child, grandchild = (
        a_project(name=name, members={people.bob: "developer"})
        for name in ("parent", "child", "grand")
    )
    a_mutual_relationship(parent, child, a_calls_b="child", b_calls_a="parent", grant=READ_WRITE)
    a_mutual_relationship(
        child, grandchild, a_calls_b="grandchild", b_calls_a="parent", grant=READ_WRITE
    )
    return {"parent": parent, "child": child, "grandchild": grandchild}


def related_url(consumer: Project, alias: str, key: str) -> str:
    return f"/api/v1/projects/{consumer.id}/related/{alias}/kv/{quote(key, safe='')}"


def test_parent_and_child_reach_each_other_and_never_the_grandchild(
    people: People, hierarchy: dict[str, Project]
) -> None:
    bob = client_for(people.bob)
    parent, child, grand = hierarchy["parent"], hierarchy["child"], hierarchy["grandchild"]
    assert put(bob, related_url(parent, "child", "from-parent"), {"value": 1}).status_code == 200
    assert bob.get(kv_url(child, "from-parent")).json()["value"] == 1
    assert put(bob, related_url(child, "parent", "from-child"), {"value": 2}).status_code == 200
    assert bob.get(related_url(parent, "child", "from-parent")).json()["source"]["alias"] == "child"
    assert put(bob, related_url(child, "grandchild", "g"), {"value": 3}).status_code == 200
    assert bob.get(related_url(grand, "parent", "from-parent")).json()["value"] == 1
    # the parent has no alias for the grandchild, and the child's alias is not the parent's
    assert_error(bob.get(related_url(parent, "grandchild", "g")), 404, "unknown_alias")
    assert bob.get(kv_url(parent, "g")).status_code == 404


def test_related_access_offers_no_delete(people: People, hierarchy: dict[str, Project]) -> None:
    bob = client_for(people.bob)
    response = bob.delete(related_url(hierarchy["parent"], "child", "k"))
    assert response.status_code == 405
    assert response.json()["code"] == "invalid_argument"


def test_a_one_sided_declaration_is_pending(people: People, hierarchy: dict[str, Project]) -> None:
    bob = client_for(people.bob)
    relationship_remove(project=hierarchy["child"], alias="parent")
    response = bob.get(related_url(hierarchy["parent"], "child", "k"))
    assert_error(response, 409, "relationship_pending")


def stock_only(hierarchy: dict[str, Project]) -> tuple[Project, Project]:
    """The child grants the parent reading its ``stock:`` keys and nothing else."""
    parent, child = hierarchy["parent"], hierarchy["child"]
    a_declaration(child, "parent", parent, Grant(read=Rule("prefixes", ("stock:",)), write=NONE))
    return parent, child


def test_a_read_only_grant_refuses_writes_and_a_prefix_grant_bounds_keys(
    people: People, hierarchy: dict[str, Project]
) -> None:
    bob = client_for(people.bob)
    parent, child = stock_only(hierarchy)
    put(bob, kv_url(child, "stock:1"), {"value": 5})
    put(bob, kv_url(child, "secret"), {"value": "s"})
    assert bob.get(related_url(parent, "child", "stock:1")).json()["value"] == 5
    assert_error(bob.get(related_url(parent, "child", "secret")), 403, "forbidden")
    assert_error(put(bob, related_url(parent, "child", "stock:1"), {"value": 4}), 403, "forbidden")


def test_a_write_only_grant_writes_but_no_compare_and_set_tells_whether_a_key_exists(
    people: People, hierarchy: dict[str, Project]
) -> None:
    bob = client_for(people.bob)
    parent, child = hierarchy["parent"], hierarchy["child"]
    a_declaration(child, "parent", parent, Grant(read=NONE, write=ALL))
    revision = put(bob, kv_url(child, "k"), {"value": "hidden"}).json()["revision"]

    # Present or absent, at its revision or not: the same refusal, before anything is tried.
    answers = [
        put(bob, related_url(parent, "child", key), {"value": 1, "expectedRevision": expected})
        for key in ("k", "absent")
        for expected in (None, revision, "1")
    ]
    assert {(a.status_code, a.json()["code"]) for a in answers} == {(403, "forbidden")}
    assert all("current" not in a.json() for a in answers)
    assert bob.get(kv_url(child, "k")).json()["value"] == "hidden"
    assert bob.get(kv_url(child, "absent")).status_code == 404
    # A plain write is what the grant opens.
    assert put(bob, related_url(parent, "child", "k"), {"value": 2}).status_code == 200


# --- batched reads (kv:batchGet) ------------------------------------------------------------


def batch(client: APIClient, project: Project, keys: Any, *, alias: str | None = None) -> Any:
    base = f"/api/v1/projects/{project.id}/" + (f"related/{alias}/" if alias else "")
    return client.post(
        base + "kv:batchGet", data=json.dumps({"keys": keys}), content_type="application/json"
    )


def test_a_batched_read_answers_every_key_in_the_order_asked(
    people: People, board: Project
) -> None:
    bob = client_for(people.bob)
    revisions = {
        k: put(bob, kv_url(board, k), {"value": {"title": k}}).json()["revision"]
        for k in ("a", "b")
    }

    response = batch(client_for(people.charlie), board, ["b", "missing", "a", "b"])

    assert response.status_code == 200, response.content
    assert response.json() == {
        "results": [
            {"found": True, "value": {"title": "b"}, "revision": revisions["b"]},
            {"found": False},
            {"found": True, "value": {"title": "a"}, "revision": revisions["a"]},
            {"found": True, "value": {"title": "b"}, "revision": revisions["b"]},
        ]
    }


def test_a_batched_read_carries_the_source_of_an_agents_write_only(
    people: People, board: Project
) -> None:
    """The bridge's rule (tests/kanban/bridge/test_read_sources.py), one code path."""
    bob = client_for(people.bob)
    run = bob.put(
        kv_url(board, "card:run"),
        data=json.dumps({"value": 1}),
        content_type="application/json",
        headers={"X-Run-Id": "run-7"},
    )
    put(bob, kv_url(board, "card:bob"), {"value": 2})

    results = batch(bob, board, ["card:run", "card:bob"]).json()["results"]

    assert results[0] == {
        "found": True,
        "value": 1,
        "revision": run.json()["revision"],
        "source": {"user": "bob", "via": "api", "runId": "run-7"},
    }
    assert "source" not in results[1]


def test_a_prefix_grant_refuses_the_keys_it_does_not_open_alone_and_reads_the_rest(
    people: People, hierarchy: dict[str, Project]
) -> None:
    bob = client_for(people.bob)
    parent, child = stock_only(hierarchy)
    put(bob, kv_url(child, "stock:1"), {"value": 5})
    put(bob, kv_url(child, "secret"), {"value": "never sent"})

    response = batch(bob, parent, ["secret", "stock:1", "stock:2"], alias="child")

    results = response.json()["results"]
    assert [r["found"] for r in results] == [False, True, False]
    assert results[0]["error"]["code"] == "forbidden" and "value" not in results[0]
    assert "never sent" not in response.content.decode()
    assert results[1]["value"] == 5 and results[2] == {"found": False}


@pytest.mark.parametrize(
    "keys",
    [[], "k", [1], [""], ["k\x00"], ["k" * 1025], [f"k{n}" for n in range(257)]],
)
def test_a_batched_read_of_bad_keys_is_refused_whole(
    people: People, board: Project, keys: Any
) -> None:
    assert_error(batch(client_for(people.bob), board, keys), 400, "invalid_argument")


def test_a_batched_read_needs_membership(people: People, board: Project) -> None:
    assert_error(batch(client_for(people.dave), board, ["k"]), 404, "not_found")


def test_values_past_the_reads_byte_budget_come_back_too_large_to_be_read_alone(
    people: People, board: Project, settings: Any
) -> None:
    from kanban.data import kv as kv_actions

    bob = client_for(people.bob)
    big = "x" * 600_000
    for n in range(8):
        put(bob, kv_url(board, f"big:{n}"), {"value": big})
    results = batch(bob, board, [f"big:{n}" for n in range(8)]).json()["results"]
    fitted = sum(1 for r in results if r["found"])
    assert fitted == kv_actions.MAX_BATCH_BYTES // (len(big) + 2)
    assert all(r["error"]["code"] == "too_large" for r in results[fitted:])


# --- the built-in Board's comments ----------------------------------------------------------


def test_a_developer_cannot_rewrite_the_owners_comment_on_a_board_over_rest(
    people: People,
) -> None:
    board = a_board(owner=people.alice, members={people.bob: "developer"})
    url = kv_url(board, "comments:c1")
    said = {"id": "a1", "author": "alice", "text": "Not yet.", "at": "2026-12-01", "edited": None}
    assert put(client_for(people.alice), url, {"value": [said]}).status_code == 200
    bob = client_for(people.bob)
    for author in ("alice", "bob"):
        forged = {**said, "author": author, "text": "Approved, ship it."}
        assert_error(put(bob, url, {"value": [forged]}), 403, "forbidden")
    assert_error(bob.delete(url), 403, "forbidden")
    assert bob.get(url).json()["value"] == [said]
    mine = {**said, "id": "b1", "author": "bob", "text": "Then I wait."}
    assert put(bob, url, {"value": [said, mine]}).status_code == 200
    too_many = [{**mine, "id": f"b{n}"} for n in range(201)]
    assert_error(put(bob, url, {"value": too_many}), 413, "too_large")


# --- schema and docs -----------------------------------------------------------------------


def test_the_openapi_schema_and_docs_are_served_without_a_cdn(db: None) -> None:
    client = APIClient()
    schema = client.get("/api/v1/schema/?format=json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert "/api/v1/projects/{project_id}/kv/{key}" in paths
    assert "/api/v1/projects/{project_id}/related/{alias}/kv/{key}" in paths
    docs = client.get("/api/v1/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "/static/drf_spectacular_sidecar/" in html
    assert "cdn" not in html.lower()


def test_the_openapi_schema_is_valid_openapi_3_with_no_warnings(db: None) -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out, stderr=out)
    assert "openapi: 3" in out.getvalue()
