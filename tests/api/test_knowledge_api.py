"""The Knowledge base over REST: the project's own documents and a related project's under
its knowledge grant, with the same roles, auth and ``{code, message}`` errors as KV."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from kanban.access.grant_rules import ALL, NONE, Grant, Rule
from kanban.models import Project
from storage.knowledge import knowledge_create
from tests.api.conftest import People, client_for
from tests.factories import a_declaration, a_project, a_relationship

pytestmark = pytest.mark.django_db


def docs_url(project: Project, rest: str = "", *, alias: str | None = None) -> str:
    base = f"/api/v1/projects/{project.id}/"
    if alias is not None:
        base += f"related/{alias}/"
    return base + "knowledge/" + rest


def send(client: APIClient, method: str, url: str, body: Any) -> Any:
    return getattr(client, method)(url, data=json.dumps(body), content_type="application/json")


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body: dict[str, Any] = response.json()
    assert body["code"] == code
    assert isinstance(body["message"], str) and body["message"]
    return body


def create(client: APIClient, project: Project, title: str, markdown: str, **extra: Any) -> Any:
    response = send(
        client,
        "post",
        docs_url(project, "documents/"),
        {"title": title, "markdown": markdown} | extra,
    )
    assert response.status_code == 201, response.content
    return response.json()


# --- the project's own documents -----------------------------------------------------------


def test_a_developer_creates_reads_edits_and_deletes_a_document(
    people: People, board: Project
) -> None:
    bob = client_for(people.bob)
    created = create(bob, board, "Runbook", "# Runbook\n\nRestart the worker.\n")
    document_id = created["id"]
    assert created["title"] == "Runbook"
    assert created["markdownPreview"].startswith("# Runbook")

    got = bob.get(docs_url(board, f"documents/{document_id}")).json()
    assert got["markdown"] == "# Runbook\n\nRestart the worker.\n"
    assert got["revision"] == created["revision"]

    patched = send(
        bob, "patch", docs_url(board, f"documents/{document_id}"), {"title": "Ops runbook"}
    )
    assert patched.status_code == 200 and patched.json()["title"] == "Ops runbook"
    replaced = send(
        bob,
        "put",
        docs_url(board, f"documents/{document_id}"),
        {"title": "Ops", "markdown": "new body", "expectedRevision": patched.json()["revision"]},
    )
    assert replaced.status_code == 200
    assert bob.get(docs_url(board, f"documents/{document_id}")).json()["markdown"] == "new body"

    assert bob.delete(docs_url(board, f"documents/{document_id}")).json() == {"deleted": True}
    assert bob.delete(docs_url(board, f"documents/{document_id}")).json() == {"deleted": False}
    assert_error(bob.get(docs_url(board, f"documents/{document_id}")), 404, "not_found")


def test_the_write_source_says_api_and_who(people: People, board: Project) -> None:
    from storage.kv import Dataset, kv_get

    bob = client_for(people.bob)
    created = create(bob, board, "Notes", "text", id="notes")
    body = kv_get(dataset=Dataset(board.id, "persistentValue"), key="knowledge.document.notes")
    assert created["id"] == "notes"
    assert body is not None and body.source is not None
    assert (body.source["via"], body.source["user"]) == ("api", "bob")


def test_a_stale_expected_revision_is_a_conflict_and_writes_nothing(
    people: People, board: Project
) -> None:
    bob = client_for(people.bob)
    created = create(bob, board, "Doc", "one")
    url = docs_url(board, f"documents/{created['id']}")
    send(bob, "patch", url, {"markdown": "two"})
    stale = send(bob, "patch", url, {"markdown": "three", "expectedRevision": created["revision"]})
    assert_error(stale, 409, "conflict")
    assert bob.get(url).json()["markdown"] == "two"


def test_listing_pages_with_the_opaque_cursor(people: People, board: Project) -> None:
    for n in range(130):
        knowledge_create(project_id=board.id, title=f"Doc {n}", markdown=f"body {n}", source={})
    charlie = client_for(people.charlie)

    first = charlie.get(docs_url(board, "documents/")).json()
    assert first["total"] == 130
    assert len(first["documents"]) == 128 and first["nextCursor"]
    second = charlie.get(docs_url(board, "documents/"), {"cursor": first["nextCursor"]}).json()
    assert [d["title"] for d in second["documents"]] == ["Doc 128", "Doc 129"]
    assert second["nextCursor"] is None
    bad = charlie.get(docs_url(board, "documents/"), {"cursor": "not-a-cursor"})
    assert_error(bad, 400, "invalid_argument")


def test_search_returns_lines_with_context_and_read_lines_a_range(
    people: People, board: Project
) -> None:
    charlie = client_for(people.charlie)
    knowledge_create(
        project_id=board.id,
        title="Runbook",
        markdown="one\ntwo\nPersistent notes\nfour\nfive\n",
        document_id="runbook",
        source={},
    )
    knowledge_create(project_id=board.id, title="Other", markdown="persistent too", source={})

    everywhere = charlie.get(docs_url(board, "search/"), {"query": "persistent"}).json()
    assert [hit["documentId"] for hit in everywhere["results"]] == ["runbook", "doc-2"]
    one = charlie.get(
        docs_url(board, "search/"),
        {"query": "Persistent", "documentId": "runbook", "beforeLines": 1, "afterLines": 2},
    ).json()
    assert one == {
        "results": [
            {
                "documentId": "runbook",
                "title": "Runbook",
                "lineNumber": 3,
                "line": "Persistent notes",
                "before": ["two"],
                "after": ["four", "five"],
            }
        ],
        "truncated": False,
    }
    lines = charlie.get(docs_url(board, "documents/runbook/lines"), {"start": 2, "end": 3}).json()
    assert lines == {
        "documentId": "runbook",
        "startLine": 2,
        "endLine": 3,
        "totalLines": 5,
        "lines": ["two", "Persistent notes"],
    }


@pytest.mark.parametrize(
    ("url", "params"),
    [
        ("search/", {}),
        ("search/", {"query": "x", "beforeLines": "-1"}),
        ("search/", {"query": "x", "afterLines": "many"}),
        ("search/", {"query": "x", "afterLines": "101"}),
        ("documents/runbook/lines", {}),
        ("documents/runbook/lines", {"start": "0"}),
        ("documents/runbook/lines", {"start": "9"}),
        ("documents/runbook/lines", {"start": "2", "end": "1"}),
        ("documents/bad id!/lines", {"start": "1"}),
    ],
)
def test_bad_query_parameters_are_invalid_argument(
    people: People, board: Project, url: str, params: dict[str, str]
) -> None:
    knowledge_create(
        project_id=board.id, title="R", markdown="a\nb\n", document_id="runbook", source={}
    )
    assert_error(
        client_for(people.charlie).get(docs_url(board, url), params), 400, "invalid_argument"
    )


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"title": "T"},
        {"markdown": "m"},
        {"title": "", "markdown": "m"},
        {"title": "T", "markdown": 5},
        {"title": "T", "markdown": "m", "projectId": "x"},
        {"title": "T", "markdown": "m", "id": "no spaces allowed"},
    ],
)
def test_malformed_creates_are_invalid_argument_and_write_nothing(
    people: People, board: Project, body: Any
) -> None:
    bob = client_for(people.bob)
    assert_error(send(bob, "post", docs_url(board, "documents/"), body), 400, "invalid_argument")
    assert bob.get(docs_url(board, "documents/")).json()["total"] == 0


def test_a_document_larger_than_a_kv_value_fits_and_one_past_its_limit_does_not(
    people: People, board: Project, settings: Any
) -> None:
    settings.KANBAN_MAX_VALUE_BYTES = 1024
    settings.KANBAN_MAX_DOCUMENT_BYTES = 100_000
    bob = client_for(people.bob)
    big = create(bob, board, "Big", "x" * 100_000)
    assert big["size"] == 100_000
    too_big = send(
        bob, "post", docs_url(board, "documents/"), {"title": "T", "markdown": "x" * 100_001}
    )
    assert_error(too_big, 413, "too_large")
    flood = send(
        bob, "post", docs_url(board, "documents/"), {"title": "T", "markdown": "x" * 400_000}
    )
    assert_error(flood, 413, "too_large")


def test_an_existing_id_is_a_conflict(people: People, board: Project) -> None:
    bob = client_for(people.bob)
    create(bob, board, "A", "a", id="same")
    again = send(
        bob, "post", docs_url(board, "documents/"), {"title": "B", "markdown": "b", "id": "same"}
    )
    assert_error(again, 409, "conflict")


# --- roles and authentication ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "read", "write"),
    [
        ("alice", 200, 201),
        ("bob", 200, 201),
        ("charlie", 200, 403),
        ("dave", 404, 404),
    ],
)
def test_roles_decide_reads_and_writes(
    people: People, board: Project, who: str, read: int, write: int
) -> None:
    knowledge_create(project_id=board.id, title="R", markdown="m", document_id="r", source={})
    client = client_for(getattr(people, who))
    assert client.get(docs_url(board, "documents/")).status_code == read
    assert client.get(docs_url(board, "documents/r")).status_code == read
    assert client.get(docs_url(board, "search/"), {"query": "m"}).status_code == read
    made = send(client, "post", docs_url(board, "documents/"), {"title": "T", "markdown": "m"})
    assert made.status_code == write
    edited = send(client, "patch", docs_url(board, "documents/r"), {"title": "T"})
    assert edited.status_code == (200 if write == 201 else write)
    assert client.delete(docs_url(board, "documents/r")).status_code == (
        200 if write == 201 else write
    )


def test_anonymous_callers_are_unauthenticated(people: People, board: Project) -> None:
    assert_error(APIClient().get(docs_url(board, "documents/")), 401, "unauthenticated")
    anonymous = send(
        APIClient(), "post", docs_url(board, "documents/"), {"title": "T", "markdown": "m"}
    )
    assert_error(anonymous, 401, "unauthenticated")


def test_session_writes_need_csrf(people: People, board: Project) -> None:
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(people.bob)
    assert browser.get(docs_url(board, "documents/")).status_code == 200
    refused = send(browser, "post", docs_url(board, "documents/"), {"title": "T", "markdown": "m"})
    assert_error(refused, 403, "forbidden")


# --- a related project's documents, under its knowledge grant -------------------------------


@pytest.fixture
def shop_and_wiki(people: People) -> tuple[Project, Project]:
    """bob develops on both; the shop calls the wiki ``wiki``, the wiki calls it ``shop``."""
    members = {people.bob: "developer", people.charlie: "guest"}
    shop, wiki = a_project(name="Shop", members=members), a_project(name="Wiki", members=members)
    a_relationship(shop, wiki, a_calls_b="wiki", b_calls_a="shop")
    for document_id in ("runbook-deploy", "secret-plan"):
        knowledge_create(
            project_id=wiki.id,
            title=document_id,
            markdown=f"# {document_id}\nrestart steps\n",
            document_id=document_id,
            source={},
        )
    return shop, wiki


def wiki_grants(shop: Project, wiki: Project, read: Rule, write: Rule) -> None:
    a_declaration(
        wiki, "shop", shop, Grant(read=ALL, write=ALL, knowledge_read=read, knowledge_write=write)
    )


def test_no_knowledge_grant_opens_nothing_even_with_full_kv_access(
    people: People, shop_and_wiki: tuple[Project, Project]
) -> None:
    shop, wiki = shop_and_wiki
    wiki_grants(shop, wiki, NONE, NONE)
    bob = client_for(people.bob)
    for response in (
        bob.get(docs_url(shop, "documents/", alias="wiki")),
        bob.get(docs_url(shop, "documents/runbook-deploy", alias="wiki")),
        bob.get(docs_url(shop, "search/", alias="wiki"), {"query": "restart"}),
        send(
            bob,
            "post",
            docs_url(shop, "documents/", alias="wiki"),
            {"title": "T", "markdown": "m"},
        ),
    ):
        assert_error(response, 403, "forbidden")


def test_an_all_grant_opens_the_whole_knowledge_base(
    people: People, shop_and_wiki: tuple[Project, Project]
) -> None:
    shop, wiki = shop_and_wiki
    wiki_grants(shop, wiki, ALL, ALL)
    bob = client_for(people.bob)
    listed = bob.get(docs_url(shop, "documents/", alias="wiki")).json()
    assert [d["id"] for d in listed["documents"]] == ["runbook-deploy", "secret-plan"]
    hits = bob.get(docs_url(shop, "search/", alias="wiki"), {"query": "restart"}).json()
    assert len(hits["results"]) == 2
    made = create_related(bob, shop, "From the shop", "hello")
    assert made.status_code == 201
    document_id = made.json()["id"]
    own = client_for(people.bob).get(docs_url(wiki, f"documents/{document_id}")).json()
    assert own["markdown"] == "hello"
    from storage.kv import Dataset, kv_get

    body = kv_get(
        dataset=Dataset(wiki.id, "persistentValue"), key=f"knowledge.document.{document_id}"
    )
    assert body is not None and body.source is not None
    assert (body.source["alias"], body.source["consumerProject"]) == ("wiki", str(shop.id))


def create_related(client: APIClient, shop: Project, title: str, markdown: str) -> Any:
    return send(
        client,
        "post",
        docs_url(shop, "documents/", alias="wiki"),
        {"title": title, "markdown": markdown},
    )


def test_a_prefix_grant_opens_named_documents_and_refuses_the_shared_index(
    people: People, shop_and_wiki: tuple[Project, Project]
) -> None:
    shop, wiki = shop_and_wiki
    runbooks = Rule("prefixes", ("runbook-",))
    wiki_grants(shop, wiki, runbooks, runbooks)
    bob = client_for(people.bob)

    got = bob.get(docs_url(shop, "documents/runbook-deploy", alias="wiki"))
    assert got.status_code == 200 and got.json()["title"] == "runbook-deploy"
    lines = bob.get(docs_url(shop, "documents/runbook-deploy/lines", alias="wiki"), {"start": 2})
    assert lines.json()["lines"] == ["restart steps"]
    one = bob.get(
        docs_url(shop, "search/", alias="wiki"),
        {"query": "restart", "documentId": "runbook-deploy"},
    )
    assert len(one.json()["results"]) == 1
    edited = send(
        bob, "patch", docs_url(shop, "documents/runbook-deploy", alias="wiki"), {"title": "New"}
    )
    assert edited.status_code == 200
    named = send(
        bob,
        "post",
        docs_url(shop, "documents/", alias="wiki"),
        {"title": "T", "markdown": "m", "id": "runbook-new"},
    )
    assert named.status_code == 201

    assert_error(bob.get(docs_url(shop, "documents/secret-plan", alias="wiki")), 403, "forbidden")
    listing = assert_error(bob.get(docs_url(shop, "documents/", alias="wiki")), 403, "forbidden")
    assert "knowledge.documents" in listing["message"]
    search = bob.get(docs_url(shop, "search/", alias="wiki"), {"query": "restart"})
    assert "knowledge.documents" in assert_error(search, 403, "forbidden")["message"]
    unnamed = create_related(bob, shop, "T", "m")
    assert_error(unnamed, 403, "forbidden")
    assert_error(
        bob.delete(docs_url(shop, "documents/secret-plan", alias="wiki")), 403, "forbidden"
    )


def test_a_read_grant_does_not_write_and_a_guest_never_writes(
    people: People, shop_and_wiki: tuple[Project, Project]
) -> None:
    shop, wiki = shop_and_wiki
    wiki_grants(shop, wiki, ALL, NONE)
    bob, charlie = client_for(people.bob), client_for(people.charlie)
    assert bob.get(docs_url(shop, "documents/", alias="wiki")).status_code == 200
    assert_error(create_related(bob, shop, "T", "m"), 403, "forbidden")
    wiki_grants(shop, wiki, ALL, ALL)
    assert charlie.get(docs_url(shop, "documents/", alias="wiki")).status_code == 200
    assert_error(create_related(charlie, shop, "T", "m"), 403, "forbidden")


def test_unknown_and_pending_aliases(
    people: People, shop_and_wiki: tuple[Project, Project]
) -> None:
    from kanban.access.relationships import relationship_remove

    shop, wiki = shop_and_wiki
    wiki_grants(shop, wiki, ALL, ALL)
    bob = client_for(people.bob)
    assert_error(bob.get(docs_url(shop, "documents/", alias="nobody")), 404, "unknown_alias")
    relationship_remove(project=wiki, alias="shop")
    assert_error(bob.get(docs_url(shop, "documents/", alias="wiki")), 409, "relationship_pending")


# --- the Knowledge base's keys are its own ---------------------------------------------------


@pytest.mark.parametrize(
    "key", ["knowledge.documents", "knowledge.document.r", "knowledge.documents.page.p1"]
)
def test_raw_persistent_value_writes_cannot_touch_knowledge_keys(
    people: People, board: Project, key: str
) -> None:
    knowledge_create(project_id=board.id, title="R", markdown="m", document_id="r", source={})
    alice = client_for(people.alice)
    url = f"/api/v1/projects/{board.id}/persistent-values/{key}"
    written = send(alice, "put", url, {"value": {"version": 1}})
    assert (
        "reserved for the Knowledge base"
        in assert_error(written, 400, "invalid_argument")["message"]
    )
    assert_error(alice.delete(url), 400, "invalid_argument")
    assert alice.get(docs_url(board, "documents/r")).json()["markdown"] == "m"
    # KV, and PersistentValue keys outside the prefix, are unaffected.
    kv = f"/api/v1/projects/{board.id}/kv/{key}"
    assert send(alice, "put", kv, {"value": 1}).status_code == 200
    other = f"/api/v1/projects/{board.id}/persistent-values/knowledgeable"
    assert send(alice, "put", other, {"value": 1}).status_code == 200
