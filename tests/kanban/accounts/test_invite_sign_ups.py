"""Invite links are no open registration: mallory owns boards like anyone and mints
100-use links on them, and every account made through one could do the same. Accounts made
through links are limited per inviter and per address a day, for the whole deployment, and a
server may let only its staff's links make accounts at all. A refusal says why and when to
try again, and creates nobody."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from kanban.access.memberships import membership_role
from kanban.accounts.invites import invite_accept, invite_create, invite_sign_up
from kanban.models import Invite, Project
from kanban.quotas import sign_in as throttle
from storage.errors import ErrorCode, KanbanError
from tests.factories import a_project, a_user

pytestmark = pytest.mark.django_db

STRONG = "a long enough passphrase 7"
HOME = "198.51.100.7"


@pytest.fixture(autouse=True)
def generous(settings: Any) -> None:
    """Each test tightens the one limit it is about."""
    settings.KANBAN_INVITE_SIGNUPS_PER_INVITER_DAY = 1000
    settings.KANBAN_INVITE_SIGNUPS_PER_ADDRESS_DAY = 1000


def a_link(owner: Any, *, board: str = "Crowd") -> str:
    project = a_project(name=board, owner=owner)
    path = invite_create(actor=owner, project_id=project.id, role="guest", uses=100).path
    return path.removeprefix("/invites/").removesuffix("/")


def sign_up(token: str, username: str, *, address: str | None = HOME) -> Any:
    user, _ = invite_sign_up(token=token, username=username, password=STRONG, address=address)
    return user


def refusal(call: Any) -> KanbanError:
    with pytest.raises(KanbanError) as caught:
        call()
    return caught.value


def usernames() -> set[str]:
    return set(get_user_model().objects.values_list("username", flat=True))


def test_mallorys_links_make_at_most_her_daily_number_of_accounts_on_all_her_boards(
    settings: Any,
) -> None:
    settings.KANBAN_INVITE_SIGNUPS_PER_INVITER_DAY = 3
    mallory, erin = a_user("mallory"), a_user("erin")
    crowd, more = a_link(mallory), a_link(mallory, board="More")
    sign_up(crowd, "sock1", address="203.0.113.1")
    sign_up(crowd, "sock2", address="203.0.113.2")
    sign_up(more, "sock3", address="203.0.113.3")

    error = refusal(lambda: sign_up(more, "sock4", address="203.0.113.4"))

    assert error.code == ErrorCode.RATE_LIMITED
    assert error.message == (
        "Too many accounts were made through @mallory's invite links today. Try again in 24 hours."
    )
    assert 86_000 < error.details["retryAfter"] <= 86_400
    assert "sock4" not in usernames()
    assert sorted(Invite.objects.values_list("uses", flat=True)) == [1, 2]
    # Someone else's link is counted apart.
    assert sign_up(a_link(erin, board="Erin's"), "gina", address="203.0.113.4")


def test_one_address_makes_at_most_its_daily_number_of_accounts_through_anyones_links(
    settings: Any,
) -> None:
    settings.KANBAN_INVITE_SIGNUPS_PER_ADDRESS_DAY = 2
    mallory, erin = a_user("mallory"), a_user("erin")
    hers, others = a_link(mallory), a_link(erin, board="Erin's")
    sign_up(hers, "sock1")
    sign_up(others, "sock2")

    error = refusal(lambda: sign_up(others, "sock3"))

    assert (error.code, error.message) == (
        ErrorCode.RATE_LIMITED,
        "Too many accounts were made from your address today. Try again in 24 hours.",
    )
    assert "sock3" not in usernames()
    assert sign_up(others, "gina", address="192.0.2.9"), "another address is counted apart"


def test_a_refused_sign_up_counts_nothing_and_the_count_ends_with_its_day(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.KANBAN_INVITE_SIGNUPS_PER_INVITER_DAY = 1
    crowd = a_link(a_user("mallory"))
    refusal(lambda: invite_sign_up(token=crowd, username="d\u0430ve", password=STRONG))
    refusal(lambda: invite_sign_up(token=crowd, username="dave", password="short"))
    sign_up(crowd, "dave")
    assert refusal(lambda: sign_up(crowd, "erin")).code == ErrorCode.RATE_LIMITED

    monkeypatch.setattr(throttle, "SIGN_UP_WINDOW", 0)  # the day is over
    assert sign_up(crowd, "erin")


def test_a_wait_under_an_hour_is_said_in_minutes(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.KANBAN_INVITE_SIGNUPS_PER_INVITER_DAY = 1
    monkeypatch.setattr(throttle, "SIGN_UP_WINDOW", 600)
    crowd = a_link(a_user("mallory"))
    sign_up(crowd, "dave")
    assert refusal(lambda: sign_up(crowd, "erin")).message.endswith("Try again in 10 minutes.")


def test_with_staff_links_only_mallorys_link_makes_no_account_but_still_admits_bob(
    settings: Any,
) -> None:
    settings.KANBAN_INVITE_SIGNUPS = "staff"
    mallory, bob = a_user("mallory"), a_user("bob")
    crowd = a_link(mallory)

    error = refusal(lambda: sign_up(crowd, "sock1"))

    assert error.code == ErrorCode.FORBIDDEN and "log in" in error.message
    assert usernames() == {"mallory", "bob"}
    assert Invite.objects.get().uses == 0
    board = invite_accept(user=bob, token=crowd)
    assert membership_role(user=bob, project=board) == "guest"


def test_with_staff_links_only_a_staff_members_link_still_makes_accounts(settings: Any) -> None:
    settings.KANBAN_INVITE_SIGNUPS = "staff"
    olivia = a_user("olivia", staff=True)
    dave = sign_up(a_link(olivia, board="Onboarding"), "dave")
    [board] = Project.objects.filter(name="Onboarding")
    assert membership_role(user=dave, project=board) == "guest"
