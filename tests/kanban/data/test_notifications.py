"""Notifications: alice (owner) and bob (developer) notify members of their board; carol,
a guest, may not; dave, on no board of theirs, cannot be reached. The rate holds across
calls, nobody notifies themselves, and a person reads only their own, of boards they are on."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone

from kanban.access.memberships import membership_set
from kanban.data.notifications import (
    NOTIFIED,
    Notified,
    notification_open,
    notification_send,
    notifications_list,
    notifications_prune,
    notifications_read,
    notifications_unread,
)
from kanban.models import Notification, Project
from storage.errors import ErrorCode, KanbanError
from tests.factories import a_project, a_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def people() -> dict[str, Any]:
    names = ("alice", "bob", "carol", "dave")
    return {name: a_user(name, first_name=name.title()) for name in names}


@pytest.fixture
def board(people: dict[str, Any]) -> Project:
    return a_project(
        name="Launch",
        owner=people["alice"],
        members={people["bob"]: "developer", people["carol"]: "guest"},
    )


def send(actor: Any, board: Project, users: Any, text: Any = "look", **extra: Any) -> Any:
    return notification_send(
        actor=actor, project_id=board.id, users=users, text=text, via="bridge", **extra
    )


def code_of(call: Any) -> ErrorCode:
    with pytest.raises(KanbanError) as caught:
        call()
    return caught.value.code


def test_alice_notifies_bob_and_carol_never_herself_and_they_see_it_with_a_link(
    people: dict[str, Any], board: Project, django_capture_on_commit_callbacks: Any
) -> None:
    heard: list[Notified] = []
    stop = NOTIFIED.listen(heard.append)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            answer = send(people["alice"], board, ["bob", "carol", "alice", "bob"], card="c1")
    finally:
        stop()
    assert answer == {"sent": ["bob", "carol"]}
    assert heard == [Notified(frozenset({people["bob"].pk, people["carol"].pk}))]
    inbox = notifications_list(user=people["bob"])
    [item] = inbox["notifications"]
    assert (item["text"], item["card"], item["read"], inbox["unread"]) == ("look", "c1", False, 1)
    assert item["url"] == f"/boards/{board.id}/#card=c1"
    assert item["sender"] == {"username": "alice", "displayName": "Alice"}
    assert notifications_unread(user=people["alice"]) == 0


def test_a_guest_may_not_notify_and_nobody_reaches_a_stranger_or_sends_bad_text(
    people: dict[str, Any], board: Project
) -> None:
    assert code_of(lambda: send(people["carol"], board, ["bob"])) == ErrorCode.FORBIDDEN
    assert code_of(lambda: send(people["dave"], board, ["bob"])) == ErrorCode.NOT_FOUND
    for users, text, card in (
        (["dave"], "hi", None),
        ([], "hi", None),
        ("bob", "hi", None),
        (["bob"], "  ", None),
        (["bob"], "x" * 501, None),
        (["bob"], "null\x00byte", None),
        (["bob"], "hi", "../etc"),
    ):
        error = code_of(lambda u=users, t=text, c=card: send(people["alice"], board, u, t, card=c))
        assert error == ErrorCode.INVALID_ARGUMENT
    assert not Notification.objects.exists()


@override_settings(KANBAN_NOTIFY_PER_MINUTE=3)
def test_the_rate_counts_every_recipient_and_a_refused_send_sends_nothing(
    people: dict[str, Any], board: Project
) -> None:
    send(people["alice"], board, ["bob", "carol"])
    assert code_of(lambda: send(people["alice"], board, ["bob", "carol"])) == (
        ErrorCode.RATE_LIMITED
    )
    send(people["alice"], board, ["bob"])
    send(people["bob"], board, ["alice"])  # his own rate
    assert Notification.objects.filter(actor=people["alice"]).count() == 3


@override_settings(KANBAN_NOTIFY_PER_MINUTE=100, KANBAN_NOTIFY_PER_RECIPIENT_HOUR=4)
def test_one_person_gets_at_most_so_many_an_hour_from_everyone_together(
    people: dict[str, Any], board: Project
) -> None:
    """L1: a phishing text reached a staff user's inbox; however many senders there are,
    a person's inbox takes ``KANBAN_NOTIFY_PER_RECIPIENT_HOUR`` an hour."""
    send(people["alice"], board, ["carol"])
    send(people["bob"], board, ["carol", "alice"])
    send(people["alice"], board, ["carol"])
    send(people["bob"], board, ["carol"])
    assert code_of(lambda: send(people["alice"], board, ["carol"])) == ErrorCode.RATE_LIMITED
    # A refused send writes nothing, to carol or to the others named with her.
    assert code_of(lambda: send(people["alice"], board, ["bob", "carol"])) == (
        ErrorCode.RATE_LIMITED
    )
    assert Notification.objects.filter(user=people["carol"]).count() == 4
    assert Notification.objects.filter(user=people["bob"]).count() == 0
    send(people["alice"], board, ["bob"])
    # An hour on, there is room again.
    Notification.objects.update(created_at=timezone.now() - timedelta(minutes=61))
    send(people["alice"], board, ["carol"])


def test_reading_marks_one_or_all_and_a_board_left_hides_its_notifications(
    people: dict[str, Any], board: Project
) -> None:
    for _ in range(3):
        send(people["alice"], board, ["bob"], card="c1")
    first = notifications_list(user=people["bob"], limit=2)
    assert len(first["notifications"]) == 2 and first["cursor"] is not None
    rest = notifications_list(user=people["bob"], limit=2, before=first["cursor"])
    assert len(rest["notifications"]) == 1 and rest["cursor"] is None
    newest = first["notifications"][0]["id"]
    assert notification_open(user=people["bob"], notification_id=newest) == (
        f"/boards/{board.id}/#card=c1"
    )
    assert notification_open(user=people["alice"], notification_id=newest) is None  # not hers
    assert notifications_unread(user=people["bob"]) == 2
    assert notifications_read(user=people["bob"]) == 2
    assert notifications_read(user=people["bob"]) == 0

    send(people["alice"], board, ["bob"])
    membership_set(user=people["bob"], project=board, role=None)
    assert notifications_list(user=people["bob"]) == {
        "notifications": [],
        "unread": 0,
        "cursor": None,
    }


@override_settings(KANBAN_NOTIFICATION_DAYS=30)
def test_pruning_deletes_what_is_past_its_days_read_or_not_and_updates_the_counts_it_changed(
    people: dict[str, Any], board: Project, django_capture_on_commit_callbacks: Any
) -> None:
    send(people["alice"], board, ["bob", "carol"], text="old")
    notifications_read(user=people["carol"])
    send(people["alice"], board, ["bob"], text="new")
    Notification.objects.filter(text="old").update(created_at=timezone.now() - timedelta(days=31))
    heard: list[Notified] = []
    stop = NOTIFIED.listen(heard.append)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            assert notifications_prune() == 2
    finally:
        stop()

    assert heard == [Notified(frozenset({people["bob"].pk}))], "carol's count did not change"
    assert [item["text"] for item in notifications_list(user=people["bob"])["notifications"]] == [
        "new"
    ]
    assert notifications_prune() == 0
    assert notifications_prune(now=timezone.now() + timedelta(days=31)) == 1


def test_a_plugin_reaching_a_related_board_notifies_nobody_there(
    people: dict[str, Any], board: Project
) -> None:
    with pytest.raises(KanbanError) as caught:
        send(people["bob"], board, ["alice"], alias="inventory")
    assert caught.value.code == ErrorCode.INVALID_ARGUMENT
    assert caught.value.message == "a plugin notifies members of its own board"
    assert not Notification.objects.exists()
