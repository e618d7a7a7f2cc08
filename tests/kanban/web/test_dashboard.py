"""The dashboard's pages without a browser: what each person is shown, and that a refused
form writes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from kanban.models import MembershipOffer, Project
from kanban.projects.board_templates import board_create
from tests.factories import a_board

pytestmark = pytest.mark.django_db


def client_of(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_new_board_from_the_form_belongs_to_its_creator_and_opens(alice: Any) -> None:
    response = client_of(alice).post("/boards/new", {"name": "Roadmap", "template": "board"})
    project = Project.objects.get(name="Roadmap")
    assert response.status_code == 302 and response["Location"] == f"/boards/{project.id}/"
    assert project.memberships.get().user == alice and project.memberships.get().role == "owner"


def test_a_refused_form_says_why_keeps_what_was_typed_and_creates_nothing(alice: Any) -> None:
    response = client_of(alice).post("/boards/new", {"name": "Roadmap", "template": "gantt"})
    page = response.content.decode()
    assert response.status_code == 400
    assert 'role="alert"' in page and "template must be one of board, inventory, blank" in page
    assert 'value="Roadmap"' in page
    assert Project.objects.count() == 0


def test_a_tile_shows_the_role_the_members_and_the_last_change_by_name(
    alice: Any, bob: Any
) -> None:
    project = a_board(owner=alice, name="Roadmap", template="blank", members={bob: "developer"})
    bob.first_name, bob.last_name = "Bob", "Okafor"
    bob.save()
    project_kv_set(
        target=Target(user=bob, project_id=project.id),
        key="k",
        value=1,
        provenance=Provenance(via="rest"),
    )

    page = client_of(bob).get("/").content.decode()

    assert 'data-testid="tile-role">developer<' in page
    assert "Bob Okafor, developer" in page and "alice, owner" in page
    assert 'data-testid="tile-changed-by">Bob Okafor<' in page


def test_someone_outside_a_board_sees_neither_its_tile_nor_its_members(
    alice: Any, charlie: Any
) -> None:
    project = board_create(user=alice, name="Private", template="board")
    client = client_of(charlie)
    assert "Private" not in client.get("/").content.decode()
    assert client.get(f"/boards/{project.id}/members/").status_code == 404
    answer = client.post(f"/boards/{project.id}/members/", {"username": "charlie", "role": "owner"})
    assert answer.status_code == 404
    assert client.post(f"/boards/{project.id}/archive", {"archived": "true"}).status_code == 404
    assert not project.memberships.filter(user=charlie).exists()


def test_an_archived_board_is_only_in_the_archive_and_only_an_owner_restores_it(
    alice: Any, bob: Any
) -> None:
    project = a_board(owner=alice, name="Old", members={bob: "developer"})
    assert (
        client_of(bob).post(f"/boards/{project.id}/archive", {"archived": "true"}).status_code
        == 403
    )

    client_of(alice).post(f"/boards/{project.id}/archive", {"archived": "true"})

    for person in (alice, bob):
        assert "Old" not in client_of(person).get("/").content.decode()
        assert "Old" in client_of(person).get("/archive/").content.decode()
    archive = client_of(bob).get("/archive/").content.decode()
    assert "Restore Old" not in archive  # bob is no owner
    assert "Restore Old" in client_of(alice).get("/archive/").content.decode()
    # Archived, not gone: the board still opens for its members.
    assert client_of(bob).get(f"/boards/{project.id}/").status_code == 200


def test_a_search_with_a_nul_says_why_instead_of_failing(alice: Any) -> None:
    a_board(owner=alice, name="Plan")
    response = client_of(alice).get("/", {"q": "pl\x00an"})
    page = response.content.decode()
    assert response.status_code == 200
    assert 'role="alert"' in page and "q must not contain NUL" in page


# --- consent and leaving -------------------------------------------------------------------


def test_a_person_added_on_the_members_page_is_only_offered_the_board_until_they_accept(
    alice: Any, bob: Any
) -> None:
    project = a_board(owner=alice, name="Roadmap", template="blank")
    owner, person = client_of(alice), client_of(bob)

    added = owner.post(f"/boards/{project.id}/members/", {"username": "bob", "role": "developer"})
    status = owner.get(added["Location"]).content.decode()
    assert "Offered bob the developer role" in status and 'data-testid="offer"' in status
    assert not project.memberships.filter(user=bob).exists()
    assert person.get(f"/boards/{project.id}/").status_code == 404

    dashboard = person.get("/").content.decode()
    assert 'data-unread="1"' in dashboard  # the top bar counts the offer
    assert "offers you the developer role on the board “Roadmap”" in dashboard
    [offer] = MembershipOffer.objects.filter(user=bob)
    accepted = person.post(f"/offers/{offer.pk}/accept")
    assert accepted.status_code == 302 and accepted["Location"] == f"/boards/{project.id}/"
    assert project.memberships.get(user=bob).role == "developer"
    assert 'data-unread="0"' in person.get("/").content.decode()


def test_a_declined_or_withdrawn_offer_is_gone_and_its_buttons_say_so(
    alice: Any, bob: Any, charlie: Any
) -> None:
    project = a_board(owner=alice, name="Roadmap", template="blank")
    owner = client_of(alice)
    for name in ("bob", "charlie"):
        owner.post(f"/boards/{project.id}/members/", {"username": name, "role": "guest"})
    bobs = MembershipOffer.objects.get(user=bob)

    assert client_of(charlie).post(f"/offers/{bobs.pk}/accept")["Location"] == (
        "/?offer=gone#inbox"
    )
    assert client_of(bob).post(f"/offers/{bobs.pk}/decline")["Location"] == "/#inbox"
    owner.post(f"/boards/{project.id}/members/", {"username": "charlie", "role": "none"})
    assert not MembershipOffer.objects.filter(declined_at=None).exists()
    assert project.memberships.count() == 1
    gone = client_of(bob).get("/?offer=gone")
    assert 'data-testid="offer-gone"' in gone.content.decode()


def test_the_members_form_tells_an_owner_nothing_of_which_usernames_exist(
    alice: Any, charlie: Any
) -> None:
    project = a_board(owner=alice, name="Roadmap", template="blank")
    owner = client_of(alice)

    pages = []
    for name in ("charlie", "nosuchuser"):
        added = owner.post(f"/boards/{project.id}/members/", {"username": name, "role": "guest"})
        assert added.status_code == 302, name
        page = owner.get(added["Location"]).content.decode()
        pages.append(page.split('data-testid="members-status">')[1].split("<")[0])
        removed = owner.post(f"/boards/{project.id}/members/", {"username": name, "role": "none"})
        assert removed.status_code == 302, name
    assert pages == [
        "Offered charlie the guest role: they join once they accept it in their inbox.",
        "Offered nosuchuser the guest role: they join once they accept it in their inbox.",
    ]


def test_any_member_leaves_from_the_members_page_but_not_the_last_owner(
    alice: Any, bob: Any
) -> None:
    project = a_board(owner=alice, name="Roadmap", template="blank", members={bob: "guest"})

    left = client_of(bob).post(f"/boards/{project.id}/leave")
    assert left.status_code == 302 and left["Location"] == "/?left=Roadmap"
    assert not project.memberships.filter(user=bob).exists()
    assert "Roadmap" in client_of(bob).get(left["Location"]).content.decode()  # the notice
    assert client_of(bob).get(f"/boards/{project.id}/").status_code == 404

    refused = client_of(alice).post(f"/boards/{project.id}/leave")
    assert refused.status_code == 400
    assert "last owner" in refused.content.decode()
    assert project.memberships.filter(user=alice, role="owner").exists()


def test_an_owner_removing_herself_once_another_owns_it_lands_on_her_dashboard(
    alice: Any, bob: Any
) -> None:
    project = a_board(owner=alice, name="Roadmap", template="blank", members={bob: "owner"})

    gone = client_of(alice).post(
        f"/boards/{project.id}/members/", {"username": "alice", "role": "none"}
    )
    assert gone.status_code == 302 and gone["Location"] == "/?left=Roadmap"
    assert list(project.memberships.values_list("user__username", flat=True)) == ["bob"]
