"""A board's people as they change it: alice owns the board and offers it to bob, who
accepts or declines; carol, a guest, leaves; nobody joins without saying yes, and an owner
learns nothing of which usernames exist."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from kanban.access.events import ACCESS_CHANGED, AccessChanged
from kanban.access.memberships import membership_role, membership_set
from kanban.data.members import (
    MemberChange,
    member_leave,
    member_set,
    offer_accept,
    offer_decline,
    offers_mine,
    offers_of_board,
)
from kanban.data.notifications import NOTIFIED, Notified, inbox_unread
from kanban.models import MembershipOffer, Project
from storage.errors import ErrorCode, KanbanError
from tests.factories import a_project, a_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def people() -> dict[str, Any]:
    return {name: a_user(name, first_name=name.title()) for name in ("alice", "bob", "carol")}


@pytest.fixture
def board(people: dict[str, Any]) -> Project:
    return a_project(name="Launch", owner=people["alice"], members={people["carol"]: "guest"})


def code_of(call: Any) -> ErrorCode:
    with pytest.raises(KanbanError) as caught:
        call()
    return caught.value.code


def offer(board: Project, actor: Any, username: str, role: str = "developer") -> MemberChange:
    return member_set(actor=actor, project_id=board.id, username=username, role=role)


def test_bob_is_offered_the_board_hears_of_it_and_is_on_it_only_once_he_accepts(
    people: dict[str, Any], board: Project, django_capture_on_commit_callbacks: Any
) -> None:
    alice, bob = people["alice"], people["bob"]
    heard: list[Notified] = []
    stop = NOTIFIED.listen(heard.append)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            assert offer(board, alice, "BOB") == MemberChange(changed=False, offered=True)
    finally:
        stop()

    assert heard == [Notified(frozenset({bob.pk}))]
    assert membership_role(user=bob, project=board) is None
    assert inbox_unread(user=bob) == 1
    [mine] = offers_mine(user=bob)
    assert (mine["board"]["name"], mine["role"], mine["offeredBy"]["displayName"]) == (
        "Launch",
        "developer",
        "Alice",
    )
    [pending] = offers_of_board(actor=alice, project_id=board.id)
    assert (pending.username, pending.role, pending.offered_by) == ("bob", "developer", "alice")

    assert offer_accept(user=bob, offer_id=mine["id"]) == board
    assert membership_role(user=bob, project=board) == "developer"
    assert offers_mine(user=bob) == [] and inbox_unread(user=bob) == 0


def test_an_offer_made_by_someone_no_longer_an_owner_is_void(
    people: dict[str, Any], board: Project
) -> None:
    """An owner demoted since cannot still bring people in through an offer of theirs."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    membership_set(user=carol, project=board, role="owner")
    offer(board, carol, "bob", "owner")
    membership_set(user=carol, project=board, role="guest")
    [mine] = offers_mine(user=bob)

    assert code_of(lambda: offer_accept(user=bob, offer_id=mine["id"])) == ErrorCode.NOT_FOUND
    assert membership_role(user=bob, project=board) is None
    assert not MembershipOffer.objects.exists(), "the void offer is gone"
    # alice's own offer still works, and accepting never lowers a role held meanwhile.
    offer(board, alice, "bob", "guest")
    membership_set(user=bob, project=board, role="developer")
    [again] = offers_mine(user=bob)
    offer_accept(user=bob, offer_id=again["id"])
    assert membership_role(user=bob, project=board) == "developer"


def test_only_the_person_offered_answers_and_a_declined_offer_changes_nothing(
    people: dict[str, Any], board: Project
) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    offer(board, alice, "bob")
    [mine] = offers_mine(user=bob)

    for who in (alice, carol):
        assert code_of(lambda w=who: offer_accept(user=w, offer_id=mine["id"])) == (
            ErrorCode.NOT_FOUND
        )
        assert code_of(lambda w=who: offer_decline(user=w, offer_id=mine["id"])) == (
            ErrorCode.NOT_FOUND
        )
    for wrong in ("1", -1, 2**63, True, None):
        assert code_of(lambda w=wrong: offer_accept(user=bob, offer_id=w)) == ErrorCode.NOT_FOUND
    offer_decline(user=bob, offer_id=mine["id"])
    assert offers_mine(user=bob) == [] and membership_role(user=bob, project=board) is None
    assert board.memberships.count() == 2


def test_a_board_declined_cannot_ask_again_for_a_month_and_its_owner_cannot_tell(
    people: dict[str, Any], board: Project, django_capture_on_commit_callbacks: Any
) -> None:
    """Declining would otherwise be a loop: offer, decline, offer, each time with the board's
    name (the owner's text) in bob's inbox."""
    alice, bob = people["alice"], people["bob"]
    offer(board, alice, "bob")
    [mine] = offers_mine(user=bob)
    offer_decline(user=bob, offer_id=mine["id"])

    heard: list[Notified] = []
    stop = NOTIFIED.listen(heard.append)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            assert offer(board, alice, "bob", "owner") == MemberChange(changed=False, offered=True)
            assert offer(board, alice, "bob", "none") == MemberChange(changed=False)
    finally:
        stop()
    assert heard == [] and offers_mine(user=bob) == [] and inbox_unread(user=bob) == 0
    assert offers_of_board(actor=alice, project_id=board.id) == []

    MembershipOffer.objects.update(declined_at=timezone.now() - timedelta(days=31))
    offer(board, alice, "bob", "guest")
    assert [o["role"] for o in offers_mine(user=bob)] == ["guest"]


def test_only_an_owner_offers_changes_or_removes_but_anyone_leaves_and_the_board_closes(
    people: dict[str, Any], board: Project, django_capture_on_commit_callbacks: Any
) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    assert code_of(lambda: offer(board, carol, "bob")) == ErrorCode.FORBIDDEN
    assert code_of(lambda: offer(board, carol, "alice", "none")) == ErrorCode.FORBIDDEN
    assert code_of(lambda: offer(board, carol, "carol", "owner")) == ErrorCode.FORBIDDEN
    assert code_of(lambda: offer(board, bob, "bob")) == ErrorCode.NOT_FOUND  # not on it

    heard: list[AccessChanged] = []
    stop = ACCESS_CHANGED.listen(heard.append)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            assert member_leave(actor=carol, project_id=board.id) is True
    finally:
        stop()
    assert heard == [AccessChanged(frozenset({board.id}), frozenset({carol.pk}))]
    assert membership_role(user=carol, project=board) is None
    assert code_of(lambda: member_leave(actor=alice, project_id=board.id)) == ErrorCode.CONFLICT


def test_nosuchuser_and_a_stranger_get_the_same_answers_and_nothing_is_stored(
    people: dict[str, Any], board: Project
) -> None:
    alice = people["alice"]
    inactive = a_user("erin", is_active=False)
    for name in ("bob", "nosuchuser", inactive.get_username()):
        assert offer(board, alice, name, "none") == MemberChange(changed=False), name
        assert offer(board, alice, name, "guest") == MemberChange(changed=False, offered=True)
    assert [o.username for o in offers_of_board(actor=alice, project_id=board.id)] == ["bob"]
    assert offer(board, alice, "bob", "none") == MemberChange(changed=True)  # withdrawn
    assert not MembershipOffer.objects.exists()
