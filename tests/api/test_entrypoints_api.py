"""Entrypoints through a relationship (seed 000): the consumer sees the target's declared
entrypoints its ``entrypoints`` grant covers, and running one is refused on the server,
which never starts a project. bob develops on the shop and on the wiki, which declares
three entrypoints and grants the shop those starting with ``kb_``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kanban.access.grant_rules import NONE, Grant, Rule
from kanban.models import Project
from tests.api.conftest import People, client_for
from tests.factories import a_declaration, a_project, a_relationship

pytestmark = pytest.mark.django_db

ENTRYPOINTS = [
    {"id": "main", "title": "Full workflow"},
    {"id": "kb_note", "title": "Write a note"},
    {"id": "kb_search"},
]


@pytest.fixture
def shop_and_wiki(people: People) -> tuple[Project, Project]:
    shop = a_project(name="Shop", members={people.bob: "developer"})
    wiki = a_project(name="Wiki", members={people.bob: "developer"})
    a_relationship(shop, wiki, a_calls_b="wiki", b_calls_a="shop")
    a_declaration(wiki, "shop", shop, Grant(entrypoints=Rule("prefixes", ("kb_",))))
    package = {"steamHarness": {"projectInfo": {}, "entrypoints": ENTRYPOINTS}}
    Project.objects.filter(pk=wiki.pk).update(package_json=json.dumps(package))
    return shop, wiki


def url(project: Project, rest: str = "", alias: str | None = None) -> str:
    related = f"related/{alias}/" if alias else ""
    return f"/api/v1/projects/{project.id}/{related}entrypoints/{rest}"


def run(client: Any, where: str, args: Any = None) -> Any:
    body = {} if args is None else {"args": args}
    return client.post(where, data=json.dumps(body), content_type="application/json")


def test_the_shop_sees_only_the_entrypoints_its_grant_covers_and_the_wiki_sees_all(
    people: People, shop_and_wiki: tuple[Project, Project]
) -> None:
    shop, wiki = shop_and_wiki
    bob = client_for(people.bob)
    listed = bob.get(url(shop, alias="wiki"))
    assert listed.status_code == 200
    assert listed.json() == {
        "entrypoints": [
            {"id": "kb_note", "title": "Write a note"},
            {"id": "kb_search", "title": "kb_search"},
        ]
    }
    assert [e["id"] for e in bob.get(url(wiki)).json()["entrypoints"]] == [
        "main",
        "kb_note",
        "kb_search",
    ]


def test_running_an_entrypoint_is_refused_on_the_server_saying_it_runs_locally(
    people: People, shop_and_wiki: tuple[Project, Project]
) -> None:
    shop, wiki = shop_and_wiki
    bob = client_for(people.bob)
    refused = run(bob, url(shop, "kb_note/run", alias="wiki"), ["--content", "hi"])
    assert refused.status_code == 422
    assert refused.json()["code"] == "not_supported"
    assert "runs locally" in refused.json()["message"]
    assert run(bob, url(wiki, "main/run")).json()["code"] == "not_supported"
    # Outside the grant the refusal is the grant's, as for any call.
    outside = run(bob, url(shop, "main/run", alias="wiki"))
    assert (outside.status_code, outside.json()["code"]) == (403, "forbidden")
    bad = run(bob, url(shop, "kb_note/run", alias="wiki"), "not a list")
    assert bad.json()["code"] == "invalid_argument"


def test_without_an_entrypoints_grant_nothing_is_listed(
    people: People, shop_and_wiki: tuple[Project, Project]
) -> None:
    shop, wiki = shop_and_wiki
    a_declaration(wiki, "shop", shop, Grant(entrypoints=NONE))
    refused = client_for(people.bob).get(url(shop, alias="wiki"))
    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden")
    unknown = client_for(people.bob).get(url(shop, alias="payroll"))
    assert unknown.json()["code"] == "unknown_alias"
