"""The plugin context: who the user is and what they may do, and never more."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AbstractUser

from kanban.access.context import plugin_context
from kanban.access.grant_rules import NONE, Grant, Rule
from kanban.access.memberships import membership_set
from kanban.models import Project
from storage.errors import KanbanError
from tests.factories import a_declaration, a_relationship, a_user
from tests.kanban.conftest import MakeProject

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol(db: None) -> AbstractUser:
    return a_user("carol")


@pytest.fixture
def board(make_project: MakeProject) -> Project:
    return make_project("Board")


@pytest.fixture
def inventory(make_project: MakeProject) -> Project:
    return make_project("Inventory", type="workflow")


def test_a_guest_is_told_they_may_read_and_not_write(alice: AbstractUser, board: Project) -> None:
    alice.first_name, alice.last_name = "Alice", "Liddell"
    alice.save()
    membership_set(user=alice, project=board, role="guest")

    context = plugin_context(user=alice, project_id=board.id)

    assert context == {
        "user": {"id": alice.pk, "username": "alice", "displayName": "Alice Liddell"},
        "role": "guest",
        "staff": False,
        "can": {"read": True, "write": False},
        "members": [
            {"id": alice.pk, "username": "alice", "displayName": "Alice Liddell", "role": "guest"}
        ],
        "related": {},
    }


def test_the_members_are_everyone_a_card_can_be_assigned_to_by_name(
    alice: AbstractUser, bob: AbstractUser, carol: AbstractUser, board: Project
) -> None:
    for person, role in ((alice, "owner"), (bob, "developer"), (carol, "guest")):
        membership_set(user=person, project=board, role=role)
    bob.first_name = "Aaron"  # sorts by the name people read
    bob.save()
    carol.is_active = False  # a deactivated account is nobody's assignee
    carol.save()

    members = plugin_context(user=alice, project_id=board.id)["members"]
    assert [(m["username"], m["displayName"], m["role"]) for m in members] == [
        ("bob", "Aaron", "developer"),
        ("alice", "alice", "owner"),
    ]


@pytest.mark.parametrize("role", ["developer", "owner"])
def test_developers_and_owners_may_write(role: str, bob: AbstractUser, board: Project) -> None:
    membership_set(user=bob, project=board, role=role)
    context = plugin_context(user=bob, project_id=board.id)
    assert (context["role"], context["can"]["write"]) == (role, True)
    assert context["user"]["displayName"] == "bob", "the username when there is no name"


def test_someone_who_is_not_a_member_gets_no_context(bob: AbstractUser, board: Project) -> None:
    with pytest.raises(KanbanError) as caught:
        plugin_context(user=bob, project_id=board.id)
    assert caught.value.code == "not_found"


def test_a_relationship_is_pending_until_the_other_side_declares_it_back(
    alice: AbstractUser, board: Project, inventory: Project
) -> None:
    membership_set(user=alice, project=board, role="developer")
    membership_set(user=alice, project=inventory, role="developer")
    a_declaration(board, "inventory", inventory)

    pending = plugin_context(user=alice, project_id=board.id)["related"]["inventory"]
    assert pending == {
        "status": "pending",
        "can": {"read": False, "write": False, "knowledgeRead": False, "knowledgeWrite": False},
    }

    a_declaration(inventory, "board", board, Grant(read=Rule("prefixes", ("stock:",)), write=NONE))
    confirmed = plugin_context(user=alice, project_id=board.id)["related"]["inventory"]
    assert confirmed == {
        "status": "confirmed",
        "can": {"read": True, "write": False, "knowledgeRead": False, "knowledgeWrite": False},
    }


def test_a_related_grant_is_only_as_good_as_the_users_roles_on_both_sides(
    alice: AbstractUser, carol: AbstractUser, board: Project, inventory: Project
) -> None:
    a_relationship(
        board,
        inventory,
        a_calls_b="inventory",
        b_calls_a="board",
        b_grants_a=Grant(read=Rule("all"), write=Rule("all"), knowledge_read=Rule("all")),
    )
    membership_set(user=carol, project=board, role="guest")

    # Carol is no member of the inventory: the grant opens nothing to her, and she is told
    # no more than a refusal would say.
    related = plugin_context(user=carol, project_id=board.id)["related"]["inventory"]
    assert related == {
        "status": "confirmed",
        "can": {"read": False, "write": False, "knowledgeRead": False, "knowledgeWrite": False},
    }

    membership_set(user=carol, project=inventory, role="developer")
    related = plugin_context(user=carol, project_id=board.id)["related"]["inventory"]
    assert related["can"] == {
        "read": True,
        "write": False,  # a guest on the board writes nowhere through it
        "knowledgeRead": True,
        "knowledgeWrite": False,
    }


def test_an_administrator_is_told_the_membership_they_hold_and_that_they_are_staff(
    make_project: MakeProject,
) -> None:
    """The context's role is the one the members list shows: a superuser who holds no
    membership is no made-up owner, though they may act as one."""
    board = make_project("Board")
    admin = a_user("root", superuser=True)
    context = plugin_context(user=admin, project_id=board.id)
    assert (context["role"], context["staff"], context["can"]["write"]) == (None, True, True)
    membership_set(user=admin, project=board, role="developer")
    context = plugin_context(user=admin, project_id=board.id)
    assert (context["role"], context["staff"]) == ("developer", True)
    assert {m["username"]: m["role"] for m in context["members"]}["root"] == "developer"
