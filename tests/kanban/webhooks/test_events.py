"""Webhook events come from committed changes, in one place: a card's stored value compared
with the one it replaced (added, moved, archived, changed), a comment list's new comments,
and memberships made or ended. Each becomes a delivery for every webhook that hears it, once
the change commits; a rolled-back change sends nothing."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.db import transaction

from kanban.access.memberships import membership_set
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from kanban.models import Project, Webhook, WebhookDelivery
from kanban.webhooks.events import card_events, comment_events
from kanban.webhooks.service import webhook_create
from storage.kv import Dataset, kv_history_purge
from tests.factories import a_project

PERSON = Provenance(via="bridge", page="/boards/x/")
CARD = {"id": "c1", "title": "Ship it", "column": "todo", "rank": "m", "labels": []}


def events_of(before: Any, after: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(str(event), data) for event, data in card_events("c1", before, after)]


def test_a_new_card_is_added() -> None:
    ((event, data),) = events_of(None, CARD)
    assert event == "card.added" and data["card"]["title"] == "Ship it"


def test_a_card_in_another_column_is_moved() -> None:
    ((event, data),) = events_of(CARD, {**CARD, "column": "done"})
    assert event == "card.moved"
    assert data["from"] == {"column": "todo"} and data["to"] == {"column": "done"}


def test_an_archived_card_is_archived_and_a_restored_one_changed() -> None:
    assert [e for e, _ in events_of(CARD, {**CARD, "archived": True})] == ["card.archived"]
    ((event, data),) = events_of({**CARD, "archived": True}, CARD)
    assert event == "card.changed" and data["changed"] == ["archived"]


def test_a_changed_card_names_its_fields() -> None:
    ((event, data),) = events_of(CARD, {**CARD, "title": "Ship it now", "labels": ["Bug"]})
    assert event == "card.changed" and data["changed"] == ["title", "labels"]


def test_a_comment_count_or_a_deletion_sends_nothing() -> None:
    assert events_of(CARD, {**CARD, "commentCount": 3}) == []
    assert events_of(CARD, {"id": "c1", "deleted": True}) == []


def test_only_new_comments_are_sent() -> None:
    old = [{"id": "k1", "author": "bob", "text": "first", "at": "2026-12-01T10:00:00Z"}]
    new = [*old, {"id": "k2", "author": "alice", "text": "second", "at": "2026-12-01T11:00:00Z"}]
    edited = [{**old[0], "text": "first, edited"}]

    ((event, data),) = comment_events({"id": "c1"}, old, new)
    assert str(event) == "card.commented" and data["comment"]["id"] == "k2"
    assert list(comment_events({"id": "c1"}, old, edited)) == []


@pytest.fixture
def board(alice: Any, bob: Any) -> Project:
    return a_project(name="Roadmap", owner=alice, members={bob: "developer"})


def hook(alice: Any, board: Project, events: list[str]) -> None:
    webhook_create(actor=alice, project_id=board.id, url="https://93.184.216.34/", events=events)


def sent() -> list[tuple[str, dict[str, Any]]]:
    return [
        (delivery.event, json.loads(delivery.body))
        for delivery in WebhookDelivery.objects.order_by("created_at")
    ]


@pytest.mark.django_db(transaction=True)
def test_a_card_written_by_anyone_is_sent_to_the_webhooks_that_hear_it(
    alice: Any, bob: Any, board: Project
) -> None:
    hook(alice, board, ["card.added", "card.moved"])
    hook(alice, board, ["card.changed"])

    def write(value: Any) -> None:
        project_kv_set(
            target=Target(user=bob, project_id=board.id),
            key="card:c1",
            value=value,
            provenance=PERSON,
        )

    write(CARD)
    write({**CARD, "column": "done"})
    write({**CARD, "column": "done", "title": "Shipped"})

    assert [event for event, _ in sent()] == ["card.added", "card.moved", "card.changed"]
    (*_, (_, changed)) = sent()
    assert changed["actor"] == "bob" and changed["data"]["changed"] == ["title"]


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_write_sends_nothing(alice: Any, bob: Any, board: Project) -> None:
    hook(alice, board, ["card.added"])

    with pytest.raises(RuntimeError), transaction.atomic():
        project_kv_set(
            target=Target(user=bob, project_id=board.id),
            key="card:c1",
            value=CARD,
            provenance=PERSON,
        )
        raise RuntimeError("rolled back")

    assert sent() == []


@pytest.mark.django_db(transaction=True)
def test_a_comment_is_sent_with_its_card(alice: Any, bob: Any, board: Project) -> None:
    hook(alice, board, ["card.commented"])
    project_kv_set(
        target=Target(user=bob, project_id=board.id), key="card:c1", value=CARD, provenance=PERSON
    )
    comment = {"id": "k1", "author": "bob", "text": "Looks good", "at": "2026-12-05T08:00:00Z"}

    project_kv_set(
        target=Target(user=bob, project_id=board.id),
        key="comments:c1",
        value=[comment],
        provenance=PERSON,
    )

    ((event, payload),) = sent()
    assert event == "card.commented"
    assert payload["data"]["card"] == {"id": "c1", "title": "Ship it"}
    assert payload["data"]["comment"]["text"] == "Looks good"


@pytest.mark.django_db(transaction=True)
def test_members_joining_and_leaving_are_sent(alice: Any, charlie: Any, board: Project) -> None:
    hook(alice, board, ["member.joined", "member.left"])

    membership_set(user=charlie, project=board, role="guest")
    membership_set(user=charlie, project=board, role="developer")  # a role change: no event
    membership_set(user=charlie, project=board, role=None)

    assert [(event, payload["data"]["member"]["username"]) for event, payload in sent()] == [
        ("member.joined", "charlie"),
        ("member.left", "charlie"),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_board_without_webhooks_sends_nothing(bob: Any, board: Project) -> None:
    project_kv_set(
        target=Target(user=bob, project_id=board.id), key="card:c1", value=CARD, provenance=PERSON
    )

    assert not WebhookDelivery.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_webhook_added_by_another_process_is_heard_within_the_snapshot(
    alice: Any, bob: Any, board: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kanban.webhooks.hooked.SNAPSHOT_SECONDS", 0.2)
    project_kv_set(
        target=Target(user=bob, project_id=board.id), key="card:c0", value=CARD, provenance=PERSON
    )
    # As another worker writes it: this process is not told.
    Webhook.objects.create(project=board, url="https://93.184.216.34/", events=["card.added"])

    time.sleep(0.3)
    project_kv_set(
        target=Target(user=bob, project_id=board.id), key="card:c1", value=CARD, provenance=PERSON
    )

    assert [event for event, _ in sent()] == ["card.added"]


@pytest.mark.django_db(transaction=True)
def test_a_card_whose_history_is_gone_is_changed_not_added(
    alice: Any, bob: Any, board: Project
) -> None:
    hook(alice, board, ["card.added", "card.moved", "card.changed"])

    def write(key: str, value: Any) -> None:
        project_kv_set(
            target=Target(user=bob, project_id=board.id), key=key, value=value, provenance=PERSON
        )

    write("card:c1", CARD)
    write("board:cards", ["c1"])
    # As KANBAN_HISTORY_DAYS and prune leave a card nobody touched for that long:
    kv_history_purge(dataset=Dataset(board.id), key="card:c1")
    write("card:c1", {**CARD, "column": "done"})
    write("card:c2", {**CARD, "id": "c2"})  # new: not in the index before

    assert [(event, p["data"].get("changed", "-")) for event, p in sent()] == [
        ("card.added", "-"),
        ("card.changed", None),
        ("card.added", "-"),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_card_copied_in_one_commit_with_the_index_is_added(alice: Any) -> None:
    from kanban.data.board.card_transfer import card_copy
    from kanban.data.board.cards import board_action
    from tests.factories import a_board

    source, target = a_board(owner=alice, name="Source"), a_board(owner=alice, name="Target")
    added = board_action(
        action="add",
        user=alice,
        project_id=source.id,
        arguments={"title": "Travel", "column": "todo"},
        provenance=PERSON,
    )
    hook(alice, target, ["card.added", "card.changed", "card.commented"])

    copied = card_copy(
        user=alice,
        project_id=source.id,
        card=added["id"],
        target_project_id=target.id,
        provenance=PERSON,
    )

    ((event, payload),) = sent()
    assert event == "card.added" and payload["data"]["card"]["id"] == copied["card"]
    assert payload["board"]["name"] == "Target"


@pytest.mark.django_db(transaction=True)
def test_a_card_written_after_its_index_in_one_commit_is_added(alice: Any, board: Project) -> None:
    from storage import engine
    from storage.writes import set_value

    hook(alice, board, ["card.added", "card.changed"])
    dataset = Dataset(board.id)

    engine.commit(
        [
            set_value(dataset.address("board:cards"), ["c9"], keep=5),
            set_value(dataset.address("card:c9"), {**CARD, "id": "c9"}, keep=5),
        ]
    )

    assert [event for event, _ in sent()] == ["card.added"]


def test_a_comment_list_whose_history_is_gone_sends_its_last_comment() -> None:
    from kanban.webhooks.events import UNKNOWN

    comments = [
        {"id": f"k{n}", "author": "bob", "text": f"number {n}", "at": "2026-12-01T10:00:00Z"}
        for n in range(3)
    ]

    ((_, data),) = comment_events({"id": "c1"}, UNKNOWN, comments)
    assert data["comment"]["id"] == "k2"
    assert [d["comment"]["id"] for _, d in comment_events({"id": "c1"}, None, comments)] == [
        "k0",
        "k1",
        "k2",
    ], "a new card's comments (a copy, an import) are all new"
