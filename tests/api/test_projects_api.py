"""Projects over REST: anyone signed in creates a board from a template and owns it; the
list holds only the caller's projects, with their role; an owner manages the members."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from kanban.access.memberships import membership_set
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.notifications import notification_send
from kanban.data.target import Target
from kanban.models import Membership, PluginFile, Project
from storage.errors import ErrorCode, KanbanError
from tests.api.conftest import People, client_for

pytestmark = pytest.mark.django_db

PROJECTS = "/api/v1/projects/"


def send(client: APIClient, method: str, where: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body)
    return getattr(client, method)(where, data=data, content_type="application/json")


def create(client: APIClient, name: str = "Launch", template: str = "board") -> dict[str, Any]:
    response = send(client, "post", PROJECTS, {"name": name, "template": template})
    assert response.status_code == 201, response.content
    body: dict[str, Any] = response.json()
    return body


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body: dict[str, Any] = response.json()
    assert body["code"] == code and body["message"]
    return body


def joins(project_id: str, person: Any, role: str) -> None:
    """``person`` is on the board at once, as an operator or an accepted offer puts them."""
    membership_set(user=person, project=Project.objects.get(pk=project_id), role=role)


def members_of(client: APIClient, project_id: str) -> dict[str, str]:
    response = client.get(f"{PROJECTS}{project_id}/members/")
    assert response.status_code == 200, response.content
    return {m["username"]: m["role"] for m in response.json()["members"]}


def test_alice_creates_a_board_from_the_board_template_and_is_its_only_owner(
    people: People,
) -> None:
    created = create(client_for(people.alice), "Launch plan")

    project = Project.objects.get(pk=created["projectId"])
    assert created["name"] == project.name == "Launch plan"
    assert created["role"] == "owner" and created["type"] == "kanban"
    assert created["members"] == [{"username": "alice", "displayName": "alice", "role": "owner"}]
    assert created["archived"] is False
    # A Board is made with its columns: its first change, by the person who made it.
    assert created["lastChange"]["username"] == "alice"
    # Its own plugin files, its own id in its package, and no relationships yet.
    paths = set(PluginFile.objects.filter(project=project).values_list("path", flat=True))
    assert {"index.html", "app.js", "board-core.js"} <= paths
    assert "plugin-kit.js" not in paths  # served beside the SDK, for every plugin, not copied
    assert project.relationships.count() == 0
    info = json.loads(project.package_json)["steamHarness"]["projectInfo"]
    assert info["projectId"] == created["projectId"] and info["relatedProjects"] == []


@pytest.mark.parametrize(
    ("template", "expected"),
    [("inventory", {"index.html", "inventory-core.js"}), ("blank", {"index.html", "app.js"})],
)
def test_the_inventory_and_blank_templates_give_their_own_plugin(
    people: People, template: str, expected: set[str]
) -> None:
    created = create(client_for(people.bob), "Mine", template)
    paths = set(
        PluginFile.objects.filter(project_id=created["projectId"]).values_list("path", flat=True)
    )
    assert expected <= paths
    if template == "blank":
        app = PluginFile.objects.get(project_id=created["projectId"], path="app.js")
        assert bytes(app.content).decode().startswith("// Mine: ")


def test_two_boards_from_one_template_share_nothing(people: People) -> None:
    alice = client_for(people.alice)
    first, second = create(alice, "One"), create(alice, "Two")
    assert first["projectId"] != second["projectId"]
    project_kv_set(
        target=Target(user=people.alice, project_id=first["projectId"]),
        key="card:c1",
        value={"title": "only here"},
        provenance=Provenance(via="rest"),
    )
    assert alice.get(f"{PROJECTS}{second['projectId']}/kv/card:c1").status_code == 404


def test_an_unknown_template_is_invalid_argument_and_creates_nothing(people: People) -> None:
    alice = client_for(people.alice)
    body = assert_error(
        send(alice, "post", PROJECTS, {"name": "X", "template": "gantt"}), 400, "invalid_argument"
    )
    assert body["field"] == "template"
    assert_error(send(alice, "post", PROJECTS, {"name": "X"}), 400, "invalid_argument")
    assert_error(
        send(alice, "post", PROJECTS, {"name": "", "template": "board"}), 400, "invalid_argument"
    )
    assert_error(
        send(alice, "post", PROJECTS, {"name": "a\u202eb", "template": "board"}),
        400,
        "invalid_argument",
    )
    assert_error(
        send(alice, "post", PROJECTS, {"name": "X", "template": "board", "owner": "bob"}),
        400,
        "invalid_argument",
    )
    assert Project.objects.count() == 0 and Membership.objects.count() == 0


def test_the_list_holds_the_callers_projects_with_their_role_and_a_non_member_gets_none(
    people: People,
) -> None:
    alice, bob, dave = (client_for(p) for p in (people.alice, people.bob, people.dave))
    launch = create(alice, "Launch")
    create(alice, "Hiring")
    joins(launch["projectId"], people.bob, "guest")

    listed = alice.get(PROJECTS).json()["projects"]
    assert [(p["name"], p["role"]) for p in listed] == [("Hiring", "owner"), ("Launch", "owner")]
    assert [(p["name"], p["role"]) for p in bob.get(PROJECTS).json()["projects"]] == [
        ("Launch", "guest")
    ]
    assert dave.get(PROJECTS).json() == {"projects": []}
    # Nor can dave read one by id: it answers as a project that does not exist.
    assert_error(dave.get(f"{PROJECTS}{launch['projectId']}/"), 404, "not_found")
    assert_error(dave.get(f"{PROJECTS}{launch['projectId']}/members/"), 404, "not_found")
    assert_error(APIClient().get(PROJECTS), 401, "unauthenticated")


def test_the_list_searches_names_and_sorts_by_last_change_naming_who_made_it(
    people: People,
) -> None:
    alice = client_for(people.alice)
    old, new, quiet = create(alice, "Old plan"), create(alice, "New plan"), create(alice, "Quiet")
    joins(new["projectId"], people.bob, "developer")
    for who, project in ((people.alice, old), (people.bob, new)):
        project_kv_set(
            target=Target(user=who, project_id=project["projectId"]),
            key="k",
            value=1,
            provenance=Provenance(via="rest"),
        )

    by_change = alice.get(PROJECTS, {"sort": "changed"}).json()["projects"]
    assert [p["name"] for p in by_change] == ["New plan", "Old plan", "Quiet"]
    assert by_change[0]["lastChange"]["username"] == "bob"
    assert by_change[1]["lastChange"]["username"] == "alice"
    assert by_change[2]["lastChange"]["username"] == "alice", "made, with its columns"
    assert [p["name"] for p in alice.get(PROJECTS, {"q": "PLAN"}).json()["projects"]] == [
        "New plan",
        "Old plan",
    ]
    assert quiet["projectId"] not in str(alice.get(PROJECTS, {"q": "plan"}).json())
    assert_error(alice.get(PROJECTS, {"sort": "size"}), 400, "invalid_argument")


def test_a_search_with_a_nul_is_a_bad_request_on_every_database(people: People) -> None:
    """PostgreSQL refuses NUL in text itself: found by the schema fuzzer as a 503."""
    alice = client_for(people.alice)
    create(alice, "Plan")

    assert_error(alice.get(PROJECTS, {"q": "pl\x00an"}), 400, "invalid_argument")


def test_an_owner_changes_and_removes_members_and_nobody_else_may(people: People) -> None:
    alice, bob = client_for(people.alice), client_for(people.bob)
    project_id = create(alice)["projectId"]
    members = f"{PROJECTS}{project_id}/members/"
    joins(project_id, people.bob, "developer")
    joins(project_id, people.charlie, "guest")

    changed = send(alice, "put", members + "charlie", {"role": "developer"})
    assert changed.json() == {"changed": True, "offered": False}
    unchanged = send(alice, "put", members + "charlie", {"role": "developer"})
    assert unchanged.json() == {"changed": False, "offered": False}
    assert members_of(bob, project_id) == {
        "alice": "owner",
        "bob": "developer",
        "charlie": "developer",
    }

    # bob sees the list but cannot change it, not even his own role.
    assert_error(send(bob, "put", members + "bob", {"role": "owner"}), 403, "forbidden")
    assert_error(send(bob, "delete", members + "charlie"), 403, "forbidden")
    assert_error(send(bob, "put", members + "dave", {"role": "guest"}), 403, "forbidden")
    assert_error(
        send(bob, "patch", f"{PROJECTS}{project_id}/", {"archived": True}), 403, "forbidden"
    )

    assert send(alice, "delete", members + "charlie").json() == {"changed": True}
    assert members_of(alice, project_id) == {"alice": "owner", "bob": "developer"}
    assert_error(send(alice, "put", members + "bob", {"role": "admin"}), 400, "invalid_argument")
    assert_error(send(alice, "put", members + "bob", {"role": "none"}), 400, "invalid_argument")


def test_the_last_owner_cannot_leave_or_step_down_until_another_owner_exists(
    people: People,
) -> None:
    alice = client_for(people.alice)
    project_id = create(alice)["projectId"]
    members = f"{PROJECTS}{project_id}/members/"

    assert_error(send(alice, "delete", members + "alice"), 409, "conflict")
    assert_error(send(alice, "put", members + "alice", {"role": "guest"}), 409, "conflict")
    joins(project_id, people.bob, "developer")
    send(alice, "put", members + "bob", {"role": "owner"})
    assert send(alice, "put", members + "alice", {"role": "developer"}).json()["changed"]
    assert members_of(alice, project_id) == {"alice": "developer", "bob": "owner"}


def test_an_owner_archives_a_project_off_the_list_and_restores_it(people: People) -> None:
    alice = client_for(people.alice)
    project_id = create(alice, "Done")["projectId"]
    project_kv_set(
        target=Target(user=people.alice, project_id=project_id),
        key="kept",
        value=1,
        provenance=Provenance(via="rest"),
    )

    archived = send(alice, "patch", f"{PROJECTS}{project_id}/", {"archived": True})
    assert archived.status_code == 200 and archived.json()["archived"] is True
    assert alice.get(PROJECTS).json() == {"projects": []}
    assert [p["name"] for p in alice.get(PROJECTS, {"archived": "true"}).json()["projects"]] == [
        "Done"
    ]
    assert alice.get(f"{PROJECTS}{project_id}/kv/kept").json()["value"] == 1

    send(alice, "patch", f"{PROJECTS}{project_id}/", {"archived": False})
    assert [p["name"] for p in alice.get(PROJECTS).json()["projects"]] == ["Done"]
    assert_error(
        send(alice, "patch", f"{PROJECTS}{project_id}/", {"archived": "yes"}),
        400,
        "invalid_argument",
    )


def test_the_schema_describes_the_project_endpoints(people: People) -> None:
    schema = client_for(people.alice).get("/api/v1/schema/", {"format": "json"}).json()
    paths = schema["paths"]
    assert {"get", "post"} <= set(paths["/api/v1/projects/"])
    body = paths["/api/v1/projects/"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["properties"]["template"]["enum"] == ["board", "inventory", "blank"]
    assert {"put", "delete"} <= set(paths["/api/v1/projects/{project_id}/members/{username}"])


# --- how many, and deleting -----------------------------------------------------------------


def test_one_person_owns_at_most_kanban_max_boards_per_user_archived_ones_included(
    people: People, settings: Any
) -> None:
    settings.KANBAN_MAX_BOARDS_PER_USER = 3
    dave = client_for(people.dave)  # a person with no role anywhere
    made = [create(dave, f"Board {n}")["projectId"] for n in range(3)]
    send(dave, "patch", f"{PROJECTS}{made[0]}/", {"archived": True})
    # A count of boards is no body size (413): the request is fine, the person is at a limit.
    refused = assert_error(
        send(dave, "post", PROJECTS, {"name": "One more", "template": "board"}),
        409,
        "limit_reached",
    )
    assert refused["limit"] == 3 and "delete one" in refused["message"]
    assert Project.objects.filter(name="One more").count() == 0, "nothing written"
    # Deleting one makes room; a superuser has no such limit.
    assert send(dave, "delete", f"{PROJECTS}{made[1]}/").status_code == 204
    create(dave, "One more")
    people.alice.is_superuser = True
    people.alice.save()
    alice = client_for(people.alice)
    for n in range(4):
        create(alice, f"Admin's {n}")


def test_an_owner_deletes_a_board_with_everything_in_it_and_nobody_else_may(
    people: People,
) -> None:
    from kanban.data.configurations import configuration_create
    from kanban.data.knowledge import project_knowledge_create
    from kanban.models import Configuration
    from storage import engine
    from storage.namespaces import project_root

    alice, bob = client_for(people.alice), client_for(people.bob)
    project_id = create(alice, "Doomed")["projectId"]
    joins(project_id, people.bob, "developer")
    source = Provenance(via="api")
    project_kv_set(
        target=Target(user=people.bob, project_id=project_id),
        key="card:1",
        value=1,
        provenance=source,
    )
    project_kv_set(
        target=Target(user=people.bob, project_id=project_id),
        key="card:1",
        value=2,
        provenance=source,
    )
    project_knowledge_create(
        target=Target(user=people.bob, project_id=project_id),
        title="Notes",
        markdown="# x",
        provenance=source,
    )
    configuration_create(user=people.bob, project_id=project_id, name="Mine", values={})

    assert_error(send(bob, "delete", f"{PROJECTS}{project_id}/"), 403, "forbidden")
    assert_error(
        send(client_for(people.dave), "delete", f"{PROJECTS}{project_id}/"), 404, "not_found"
    )
    assert send(alice, "delete", f"{PROJECTS}{project_id}/").status_code == 204

    assert not Project.objects.filter(pk=project_id).exists()
    assert not Membership.objects.filter(project_id=project_id).exists()
    assert not Configuration.objects.filter(project_id=project_id).exists()
    root = project_root(project_id)
    with engine.driver_cursor("default") as (dialect, cursor):
        mark = dialect.placeholder
        for table in ("scalar_values", "list_values", "value_history"):
            sql = f"SELECT count(*) FROM {table} WHERE namespace >= {mark} AND namespace < {mark}"
            cursor.execute(sql, (root, root[:-1] + "/"))  # every dataset of the project
            assert cursor.fetchone()[0] == 0, table
    assert_error(alice.get(f"{PROJECTS}{project_id}/"), 404, "not_found")


@pytest.mark.parametrize("username", ["bob\x00", "\x00", "bo\x1fb", "bob\u200b\x1b"])
def test_a_username_with_a_control_character_is_a_bad_request_not_a_server_fault(
    people: People, username: str
) -> None:
    """A NUL reached PostgreSQL and came back as 503 unavailable, which tells a client to
    retry a request that can never succeed; it is a bad argument."""
    alice = client_for(people.alice)
    project_id = create(alice)["projectId"]
    where = f"{PROJECTS}{project_id}/members/{username}"
    refused = assert_error(send(alice, "put", where, {"role": "guest"}), 400, "invalid_argument")
    assert refused["field"] == "username"


# --- consent and leaving -------------------------------------------------------------------------


def offers_of(client: APIClient) -> list[dict[str, Any]]:
    response = client.get("/api/v1/offers/")
    assert response.status_code == 200, response.content
    found: list[dict[str, Any]] = response.json()["offers"]
    return found


def test_adding_someone_by_username_only_offers_them_the_board_until_they_accept(
    people: People,
) -> None:
    """L1: an owner put a staff user on her board as a guest and notified them, without
    their consent; now the person sees an offer and nothing else until they accept."""
    alice, bob = client_for(people.alice), client_for(people.bob)
    project_id = create(alice, "Totally legit")["projectId"]
    members = f"{PROJECTS}{project_id}/members/"

    answer = send(alice, "put", members + "bob", {"role": "guest"})
    assert answer.status_code == 200 and answer.json() == {"changed": False, "offered": True}
    assert members_of(alice, project_id) == {"alice": "owner"}
    assert bob.get(PROJECTS).json() == {"projects": []}
    assert_error(bob.get(f"{PROJECTS}{project_id}/kv/anything"), 404, "not_found")
    with pytest.raises(KanbanError) as refused:
        notification_send(
            actor=people.alice,
            project_id=project_id,
            users=["bob"],
            text="Your password expires: http://evil.example",
            via="bridge",
        )
    assert refused.value.code == ErrorCode.INVALID_ARGUMENT  # not a member: nothing sent

    [offer] = offers_of(bob)
    assert offer["board"] == {"id": project_id, "name": "Totally legit"}
    assert offer["role"] == "guest" and offer["offeredBy"]["username"] == "alice"
    assert offers_of(alice) == []
    assert send(bob, "post", f"/api/v1/offers/{offer['id']}/accept").status_code == 200
    assert members_of(alice, project_id) == {"alice": "owner", "bob": "guest"}
    assert offers_of(bob) == []


def test_a_declined_offer_is_gone_and_nobody_else_answers_someone_elses(people: People) -> None:
    alice, bob, dave = (client_for(p) for p in (people.alice, people.bob, people.dave))
    project_id = create(alice)["projectId"]
    send(alice, "put", f"{PROJECTS}{project_id}/members/bob", {"role": "developer"})
    [offer] = offers_of(bob)

    assert_error(send(dave, "post", f"/api/v1/offers/{offer['id']}/accept"), 404, "not_found")
    assert_error(send(alice, "post", f"/api/v1/offers/{offer['id']}/accept"), 404, "not_found")
    assert send(bob, "post", f"/api/v1/offers/{offer['id']}/decline").status_code == 204
    assert offers_of(bob) == []
    assert members_of(alice, project_id) == {"alice": "owner"}
    assert_error(send(bob, "post", f"/api/v1/offers/{offer['id']}/accept"), 404, "not_found")


def test_an_owner_sees_and_withdraws_the_offers_of_her_board(people: People) -> None:
    alice, bob, charlie = (client_for(p) for p in (people.alice, people.bob, people.charlie))
    project_id = create(alice)["projectId"]
    members = f"{PROJECTS}{project_id}/members/"
    send(alice, "put", members + "bob", {"role": "developer"})
    send(alice, "put", members + "bob", {"role": "owner"})  # the offer, raised

    pending = alice.get(f"{PROJECTS}{project_id}/offers/").json()["offers"]
    assert [(o["username"], o["role"]) for o in pending] == [("bob", "owner")]
    assert [o["role"] for o in offers_of(bob)] == ["owner"]
    assert send(alice, "delete", members + "bob").json() == {"changed": True}
    assert offers_of(bob) == []
    assert alice.get(f"{PROJECTS}{project_id}/offers/").json() == {"offers": []}
    send(alice, "put", members + "charlie", {"role": "guest"})
    [offer] = offers_of(charlie)
    send(charlie, "post", f"/api/v1/offers/{offer['id']}/accept")
    assert_error(charlie.get(f"{PROJECTS}{project_id}/offers/"), 403, "forbidden")


def test_an_owner_learns_nothing_of_which_usernames_exist(people: People) -> None:
    """L2: removing ``nosuchuser`` answered 404 where removing a real non-member answered
    ``changed: false``; adding one told them apart the same way."""
    alice = client_for(people.alice)
    project_id = create(alice)["projectId"]
    members = f"{PROJECTS}{project_id}/members/"

    for username in ("dave", "nosuchuser"):
        removed = send(alice, "delete", members + username)
        assert (removed.status_code, removed.json()) == (200, {"changed": False}), username
        offered = send(alice, "put", members + username, {"role": "guest"})
        assert (offered.status_code, offered.json()) == (
            200,
            {"changed": False, "offered": True},
        ), username
    assert members_of(alice, project_id) == {"alice": "owner"}


def test_any_member_leaves_a_board_but_its_last_owner_only_once_another_owns_it(
    people: People,
) -> None:
    alice, bob, charlie = (client_for(p) for p in (people.alice, people.bob, people.charlie))
    project_id = create(alice)["projectId"]
    members = f"{PROJECTS}{project_id}/members/"
    for person, role in ((people.bob, "developer"), (people.charlie, "guest")):
        membership_set(user=person, project=Project.objects.get(pk=project_id), role=role)

    assert send(charlie, "delete", members + "charlie").json() == {"changed": True}
    assert charlie.get(PROJECTS).json() == {"projects": []}
    assert_error(send(bob, "delete", members + "alice"), 403, "forbidden")
    assert send(bob, "delete", members + "bob").json() == {"changed": True}
    refused = assert_error(send(alice, "delete", members + "alice"), 409, "conflict")
    assert "owner" in refused["message"]
    assert members_of(alice, project_id) == {"alice": "owner"}
