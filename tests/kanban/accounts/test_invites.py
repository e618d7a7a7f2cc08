"""Invite links: alice, who owns the board, makes one for a role; dave, who has no account,
joins through it; bob, who has one, joins with a click. A link ends when it expires, is
revoked or used up, and then creates nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from kanban.access.memberships import membership_role, membership_set
from kanban.accounts.invites import (
    MAX_ACTIVE,
    invite_accept,
    invite_create,
    invite_revoke,
    invite_sign_up,
    invites_list,
)
from kanban.data.members import member_set
from kanban.models import Invite, Project
from storage.errors import ErrorCode, KanbanError
from tests.factories import a_project, a_user

pytestmark = pytest.mark.django_db

STRONG = "a long enough passphrase 7"


@pytest.fixture
def alice() -> Any:
    return a_user("alice")


@pytest.fixture
def bob() -> Any:
    return a_user("bob", password=STRONG)


@pytest.fixture
def board(alice: Any) -> Project:
    return a_project(name="Launch", owner=alice)


def token_of(path: str) -> str:
    return path.removeprefix("/invites/").removesuffix("/")


def refusal(call: Any) -> KanbanError:
    with pytest.raises(KanbanError) as caught:
        call()
    return caught.value


def test_dave_joins_as_a_guest_through_alices_link_and_it_is_then_used_up(
    alice: Any, board: Project
) -> None:
    created = invite_create(actor=alice, project_id=board.id, role="guest")
    token = token_of(created.path)
    assert created.invite.digest != token and token not in created.invite.digest

    dave, joined = invite_sign_up(token=token, username="dave", password=STRONG)

    assert joined == board and membership_role(user=dave, project=board) == "guest"
    error = refusal(lambda: invite_sign_up(token=token, username="erin", password=STRONG))
    assert (error.code, error.message) == (
        ErrorCode.NOT_FOUND,
        "This invite link has been used up.",
    )
    assert not get_user_model().objects.filter(username="erin").exists()


def test_a_refused_username_or_password_creates_nobody_and_uses_nothing(
    alice: Any, board: Project
) -> None:
    token = token_of(invite_create(actor=alice, project_id=board.id, role="guest").path)
    look_alike = "d\u0430ve"  # a Cyrillic a
    for username, password in ((look_alike, STRONG), ("dave", "short"), ("alice", STRONG)):
        refusal(lambda u=username, p=password: invite_sign_up(token=token, username=u, password=p))
    assert Invite.objects.get().uses == 0
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["alice"]


def test_accepting_never_lowers_a_role_and_uses_the_link_only_when_it_gives_something(
    alice: Any, bob: Any, board: Project
) -> None:
    token = token_of(invite_create(actor=alice, project_id=board.id, role="developer", uses=5).path)
    invite_accept(user=bob, token=token)
    invite_accept(user=bob, token=token)
    assert membership_role(user=bob, project=board) == "developer"
    assert Invite.objects.get().uses == 1
    invite_accept(user=alice, token=token)
    assert membership_role(user=alice, project=board) == "owner"
    assert Invite.objects.get().uses == 1


def test_an_expired_or_revoked_link_or_a_made_up_one_says_why_and_does_nothing(
    alice: Any, bob: Any, board: Project
) -> None:
    expired = invite_create(actor=alice, project_id=board.id, role="guest")
    Invite.objects.filter(pk=expired.invite.pk).update(expires_at=timezone.now() - timedelta(1))
    revoked = invite_create(actor=alice, project_id=board.id, role="guest")
    assert invite_revoke(actor=alice, project_id=board.id, invite_id=revoked.invite.pk)
    assert not invite_revoke(actor=alice, project_id=board.id, invite_id=revoked.invite.pk)
    for path, why in (
        (expired.path, "This invite link has expired."),
        (revoked.path, "This invite link was revoked."),
        ("/invites/" + "x" * 32 + "/", "There is no such invite link."),
        ("/invites/\x00/", "There is no such invite link."),
    ):
        error = refusal(lambda p=path: invite_accept(user=bob, token=token_of(p)))
        assert (error.code, error.message) == (ErrorCode.NOT_FOUND, why)
    assert membership_role(user=bob, project=board) is None


def test_only_an_owner_makes_or_revokes_links_and_within_bounds(
    alice: Any, bob: Any, board: Project
) -> None:
    membership_set(user=bob, project=board, role="developer")
    assert refusal(lambda: invite_create(actor=bob, project_id=board.id, role="guest")).code == (
        ErrorCode.FORBIDDEN
    )
    for bad in ({"role": "none"}, {"role": "admin"}, {"days": 0}, {"days": 31}, {"uses": True}):
        arguments: dict[str, Any] = {"role": "guest", **bad}
        error = refusal(lambda a=arguments: invite_create(actor=alice, project_id=board.id, **a))
        assert error.code == ErrorCode.INVALID_ARGUMENT
    for _ in range(MAX_ACTIVE):
        invite_create(actor=alice, project_id=board.id, role="guest")
    error = refusal(lambda: invite_create(actor=alice, project_id=board.id, role="guest"))
    assert error.code == ErrorCode.CONFLICT


def test_the_pages_dave_signs_up_and_lands_on_the_board_bob_joins_with_one_click(
    alice: Any, bob: Any, board: Project
) -> None:
    owner = Client()
    owner.force_login(alice)
    page = owner.post(f"/boards/{board.id}/invites", {"role": "guest", "days": "7", "uses": "2"})
    assert page.status_code == 200
    link = page.context["invite_link"]["url"]
    assert link.startswith("http://testserver/invites/")
    path = link.removeprefix("http://testserver")

    dave = Client()
    assert "Join Launch" in dave.get(path).content.decode()
    differ = dave.post(path, {"username": "dave", "password": STRONG, "password2": STRONG + "!"})
    assert differ.status_code == 400 and "The two passwords differ." in differ.content.decode()
    landed = dave.post(path, {"username": "dave", "password": STRONG, "password2": STRONG})
    assert landed.status_code == 302 and landed["Location"] == f"/boards/{board.id}/"
    assert dave.get(landed["Location"]).status_code == 200  # signed in, a guest

    signed_in = Client()
    signed_in.force_login(bob)
    assert signed_in.post(path).status_code == 302
    assert membership_role(user=bob, project=board) == "guest"
    gone = Client().get(path)
    assert gone.status_code == 404 and "used up" in gone.content.decode()

    listed = owner.get(f"/boards/{board.id}/members/")
    assert listed.context["invites"] == []


# M2: a link cannot outlive its maker's ownership ----------------------------------------


@pytest.fixture
def erin() -> Any:
    return a_user("erin")


@pytest.fixture
def frank() -> Any:
    return a_user("frank")


@pytest.fixture
def ops(erin: Any, frank: Any) -> Project:
    return a_project(name="Ops", owner=erin, members={frank: "owner"})


@pytest.mark.parametrize("frank_makes_erin", [None, "developer", "guest"])
def test_erin_cannot_come_back_as_owner_through_her_own_link_once_frank_took_it_away(
    erin: Any, frank: Any, ops: Project, frank_makes_erin: str | None
) -> None:
    token = token_of(invite_create(actor=erin, project_id=ops.id, role="owner", uses=5).path)

    member_set(actor=frank, project_id=ops.id, username="erin", role=frank_makes_erin)

    error = refusal(lambda: invite_accept(user=erin, token=token))
    assert (error.code, error.message) == (ErrorCode.NOT_FOUND, "This invite link was revoked.")
    assert membership_role(user=erin, project=ops) == frank_makes_erin
    assert membership_role(user=frank, project=ops) == "owner"
    assert invites_list(actor=frank, project_id=ops.id) == []


def test_erin_still_owning_the_board_keeps_her_links_working_whatever_else_changes(
    erin: Any, frank: Any, ops: Project
) -> None:
    token = token_of(invite_create(actor=erin, project_id=ops.id, role="guest", uses=5).path)
    member_set(actor=erin, project_id=ops.id, username="frank", role="developer")
    member_set(actor=erin, project_id=ops.id, username="erin", role="owner")

    gina = a_user("gina")
    invite_accept(user=gina, token=token)
    assert membership_role(user=gina, project=ops) == "guest"
    assert [invite.created_by for invite in invites_list(actor=erin, project_id=ops.id)] == [erin]


def test_a_link_admits_nobody_once_its_maker_no_longer_owns_the_board_however_that_happened(
    erin: Any, ops: Project
) -> None:
    """A superuser owns every board without a membership, so no membership change revokes
    their links: accepting asks whether the maker owns the board still."""
    root = a_user("root", superuser=True)
    token = token_of(invite_create(actor=root, project_id=ops.id, role="owner", uses=5).path)
    root.is_superuser = False
    root.save(update_fields=["is_superuser"])
    assert invites_list(actor=erin, project_id=ops.id) == [], "the owners see no working link"

    gina = a_user("gina")
    error = refusal(lambda: invite_accept(user=gina, token=token))
    assert error.code == ErrorCode.NOT_FOUND and "no longer" in error.message
    refusal(lambda: invite_sign_up(token=token, username="henry", password=STRONG))
    assert membership_role(user=gina, project=ops) is None
    assert not get_user_model().objects.filter(username="henry").exists()
    assert Invite.objects.get().uses == 0


def test_a_link_whose_maker_was_deactivated_admits_nobody(erin: Any, ops: Project) -> None:
    token = token_of(invite_create(actor=erin, project_id=ops.id, role="developer").path)
    erin.is_active = False
    erin.save(update_fields=["is_active"])
    gina = a_user("gina")
    assert refusal(lambda: invite_accept(user=gina, token=token)).code == ErrorCode.NOT_FOUND
    assert membership_role(user=gina, project=ops) is None
