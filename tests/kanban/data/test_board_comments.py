"""Comments the server vouches for: on a project running the built-in Board, the comment
list under ``comments:<card>`` changes as the Board page promises whichever way the write
comes in. A new comment is its writer's, only its author edits it, only its author or an
owner deletes it, a list and a checklist stay within the Board's caps, and a guest reads no
deleted comment through history. alice owns the board, bob and dave develop on it, carol is
a guest."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connections

from kanban.access.grant_rules import ALL, Grant
from kanban.data.board import layout
from kanban.data.board.comments import MAX_COMMENT, MAX_COMMENTS
from kanban.data.kv import Provenance, project_kv_delete, project_kv_get, project_kv_history
from kanban.data.kv import project_kv_set as kv_set
from kanban.data.target import Target
from kanban.models import Project
from storage import kv as storage_kv
from storage.errors import KanbanError
from storage.writes import ANY
from tests.factories import a_board, a_project, a_relationship, users

pytestmark = pytest.mark.django_db

KEY = "comments:c1"
AT = "2026-12-01T09:00:00.000Z"
PERSON = Provenance(via="bridge", page="/boards/x/")


@pytest.fixture
def people(db: None) -> dict[str, Any]:
    return {user.username: user for user in users("alice", "bob", "carol", "dave")}


@pytest.fixture
def board(people: dict[str, Any]) -> Project:
    return a_board(
        owner=people["alice"],
        members={people["bob"]: "developer", people["carol"]: "guest", people["dave"]: "developer"},
    )


def comment(comment_id: str, author: object, text: str, **more: Any) -> dict[str, Any]:
    return {"id": comment_id, "author": author, "text": text, "at": AT, "edited": None, **more}


def write(
    project: Project,
    user: Any,
    value: Any,
    *,
    key: str = KEY,
    expected: str | object | None = ANY,
) -> str:
    return kv_set(
        target=Target(user=user, project_id=project.id),
        key=key,
        value=value,
        provenance=PERSON,
        expected_revision=expected,
    )


def refused(code: str, project: Project, user: Any, value: Any, **how: Any) -> KanbanError:
    before = stored(project, user, key=how.get("key", KEY))
    with pytest.raises(KanbanError) as raised:
        write(project, user, value, **how)
    assert raised.value.code == code, raised.value.as_dict()
    assert stored(project, user, key=how.get("key", KEY)) == before, "nothing is written"
    return raised.value


def stored(project: Project, user: Any, *, key: str = KEY) -> Any:
    entry = project_kv_get(target=Target(user=user, project_id=project.id), key=key)
    return None if entry is None else entry.value


def test_a_developer_cannot_rewrite_the_owners_comment_whatever_author_he_names(
    people: dict[str, Any], board: Project
) -> None:
    alice, bob = people["alice"], people["bob"]
    write(board, alice, [comment("a1", "alice", "Needs another review.")])
    approved = "Approved, ship it."
    refused("forbidden", board, bob, [comment("a1", "alice", approved)])
    refused("forbidden", board, bob, [comment("a1", "bob", approved)])
    refused("forbidden", board, bob, [comment("a1", "alice", approved, edited=AT)])
    assert stored(board, alice) == [comment("a1", "alice", "Needs another review.")]


def test_a_new_comment_is_its_writers_and_no_one_elses(
    people: dict[str, Any], board: Project
) -> None:
    alice, bob = people["alice"], people["bob"]
    write(board, alice, [comment("a1", "alice", "First.")])
    error = refused(
        "forbidden", board, bob, [comment("a1", "alice", "First."), comment("b1", "alice", "Hi")]
    )
    assert "bob" in error.message
    write(board, bob, [comment("a1", "alice", "First."), comment("b1", "bob", "Hi")])
    untimed = {"id": "b2", "author": "bob", "text": "No time given"}
    write(board, bob, [comment("a1", "alice", "First."), comment("b1", "bob", "Hi"), untimed])
    assert [c["author"] for c in stored(board, bob)] == ["alice", "bob", "bob"]


def test_the_author_edits_and_deletes_their_own_comment(
    people: dict[str, Any], board: Project
) -> None:
    alice, bob = people["alice"], people["bob"]
    write(board, alice, [comment("a1", "alice", "First.")])
    mine = comment("b1", "bob", "Typo hre")
    write(board, bob, [comment("a1", "alice", "First."), mine])
    fixed = {**mine, "text": "Typo here", "edited": AT}
    write(board, bob, [comment("a1", "alice", "First."), fixed])
    refused(
        "forbidden", board, bob, [comment("a1", "alice", "First."), {**fixed, "author": "dave"}]
    )
    write(board, bob, [comment("a1", "alice", "First.")])
    assert stored(board, bob) == [comment("a1", "alice", "First.")]


def test_an_owner_deletes_anyones_comment_but_edits_only_her_own(
    people: dict[str, Any], board: Project
) -> None:
    alice, bob, dave = people["alice"], people["bob"], people["dave"]
    write(board, bob, [comment("b1", "bob", "Mine."), comment("b2", "bob", "Mine too.")])
    refused("forbidden", board, dave, [comment("b2", "bob", "Mine too.")])
    refused("forbidden", board, alice, [comment("b1", "bob", "Ours."), comment("b2", "bob", "x")])
    write(board, alice, [comment("b2", "bob", "Mine too.")])
    assert stored(board, alice) == [comment("b2", "bob", "Mine too.")]


def test_deleting_the_key_deletes_every_comment_and_is_held_to_the_same_rule(
    people: dict[str, Any], board: Project
) -> None:
    alice, bob = people["alice"], people["bob"]
    write(board, alice, [comment("a1", "alice", "Keep me.")])
    with pytest.raises(KanbanError) as raised:
        project_kv_delete(target=Target(user=bob, project_id=board.id), key=KEY, provenance=PERSON)
    assert raised.value.code == "forbidden"
    assert stored(board, bob) == [comment("a1", "alice", "Keep me.")]
    write(board, bob, [], key="comments:c2")
    write(board, bob, [comment("b1", "bob", "Only mine.")], key="comments:c2")
    assert project_kv_delete(
        target=Target(user=bob, project_id=board.id), key="comments:c2", provenance=PERSON
    )
    assert project_kv_delete(
        target=Target(user=alice, project_id=board.id), key=KEY, provenance=PERSON
    )
    assert stored(board, alice) is None


def test_a_compare_and_set_is_checked_against_the_list_it_replaces(
    people: dict[str, Any], board: Project
) -> None:
    alice, bob = people["alice"], people["bob"]
    first = write(board, bob, [comment("b1", "bob", "One.")], expected=None)
    second = write(board, alice, [comment("b1", "bob", "One."), comment("a1", "alice", "Two.")])
    stale = refused("conflict", board, bob, [comment("b1", "bob", "Edited.")], expected=first)
    assert stale.details["current"]["revision"] == second
    # The same revision written with leading zeros is still that revision, and checked.
    spelled = "0" * 3 + second
    refused("forbidden", board, bob, [comment("b1", "bob", "One.")], expected=spelled)
    write(
        board,
        bob,
        [comment("b1", "bob", "Once."), comment("a1", "alice", "Two.")],
        expected=spelled,
    )


@pytest.mark.django_db(transaction=True)
def test_a_comment_that_lands_while_a_write_is_checked_is_never_lost(
    people: dict[str, Any], board: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob clears the list as he read it, his own comment alone; right after his read,
    alice adds hers from another connection. Whichever order the database settles on (on
    SQLite she waits for his transaction; on PostgreSQL she may commit inside it), the
    outcome is one of the two serial ones: never his clearing over her comment."""
    alice, bob = people["alice"], people["bob"]
    write(board, bob, [comment("b1", "bob", "Mine.")])
    both = [comment("b1", "bob", "Mine."), comment("a1", "alice", "Hers.")]
    read = storage_kv.kv_get
    outcomes: dict[str, str] = {}
    landed = threading.Event()

    def alice_comments() -> None:
        try:
            write(board, alice, both)
            outcomes["alice"] = "written"
        except KanbanError as error:
            outcomes["alice"] = error.code
        finally:
            connections.close_all()
            landed.set()

    alice_thread = threading.Thread(target=alice_comments)

    def alice_comments_once_bob_has_read(*, dataset: storage_kv.Dataset, key: str) -> Any:
        entry = read(dataset=dataset, key=key)
        if threading.current_thread() is threading.main_thread() and alice_thread.ident is None:
            alice_thread.start()
            landed.wait(timeout=1)
        return entry

    monkeypatch.setattr(storage_kv, "kv_get", alice_comments_once_bob_has_read)
    try:
        write(board, bob, [])
        outcomes["bob"] = "written"
    except KanbanError as error:
        outcomes["bob"] = error.code
    alice_thread.join(timeout=30)
    monkeypatch.undo()
    if outcomes["bob"] == "written":  # bob first: alice's list re-adds his comment
        assert outcomes["alice"] == "forbidden" and stored(board, alice) == []
    else:  # alice first: bob's clearing would delete hers
        assert outcomes == {"alice": "written", "bob": "forbidden"}
        assert stored(board, alice) == both


@pytest.mark.parametrize(
    "value",
    [
        {"a1": "not a list"},
        [comment("b1", "bob", "Same id."), comment("b1", "bob", "Again.")],
        [comment("b1", "bob", "   ")],
        [comment("bad id!", "bob", "Hi")],
        [comment("b1", "bob", "x" * (MAX_COMMENT + 1))],
        [comment("b1", "bob", "Hi", at=1)],
        [comment("b1", "", "Hi")],
        [comment("b1", 7, "Hi")],
        [comment("b1", "bob", "Hi", edited=3)],
    ],
)
def test_a_list_the_board_would_not_show_as_written_is_invalid(
    people: dict[str, Any], board: Project, value: Any
) -> None:
    refused("invalid_argument", board, people["bob"], value)


def test_a_comment_list_past_the_boards_cap_is_too_large(
    people: dict[str, Any], board: Project
) -> None:
    bob = people["bob"]
    full = [comment(f"b{n}", "bob", f"Comment {n}") for n in range(MAX_COMMENTS)]
    write(board, bob, full)
    error = refused("too_large", board, bob, [*full, comment("one-more", "bob", "Hi")])
    assert error.details["limit"] == MAX_COMMENTS == 200
    # Text at the cap counts as the page counts it (UTF-16 units): an emoji is two.
    refused("invalid_argument", board, bob, [comment("e1", "bob", "😀" * (MAX_COMMENT // 2 + 1))])
    write(board, bob, [comment("e1", "bob", "😀" * (MAX_COMMENT // 2))], key="comments:c2")


def test_a_checklist_past_the_boards_cap_is_too_large(
    people: dict[str, Any], board: Project
) -> None:
    bob = people["bob"]
    items = [{"id": f"i{n}", "text": f"Step {n}", "done": False} for n in range(51)]
    card = {"id": "c1", "title": "Many steps", "column": "todo", "rank": "i"}
    write(board, bob, {**card, "checklist": items[: layout.MAX_CHECKLIST]}, key="card:c1")
    error = refused("too_large", board, bob, {**card, "checklist": items}, key="card:c1")
    assert error.details["limit"] == layout.MAX_CHECKLIST == 50


def test_a_write_through_a_related_project_is_held_to_the_boards_rule(
    people: dict[str, Any], board: Project
) -> None:
    alice, bob = people["alice"], people["bob"]
    notes = a_project(name="Notes", owner=bob, members={people["carol"]: "developer"})
    a_relationship(
        board, notes, a_calls_b="notes", b_calls_a="board", a_grants_b=Grant(read=ALL, write=ALL)
    )
    write(board, alice, [comment("a1", "alice", "Mine.")])
    with pytest.raises(KanbanError) as raised:
        kv_set(
            target=Target(user=bob, project_id=notes.id, alias="board"),
            key=KEY,
            value=[comment("a1", "alice", "Approved, ship it.")],
            provenance=PERSON,
        )
    assert raised.value.code == "forbidden"
    assert stored(board, alice) == [comment("a1", "alice", "Mine.")]
    # carol develops on the notes but is a guest on the board: a guest there.
    with pytest.raises(KanbanError) as raised:
        project_kv_history(
            target=Target(user=people["carol"], project_id=notes.id, alias="board"), key=KEY
        )
    assert raised.value.code == "forbidden"


def test_another_plugins_project_keeps_its_own_keys_free(people: dict[str, Any]) -> None:
    alice, bob = people["alice"], people["bob"]
    other = a_project(name="Notes", owner=alice, members={bob: "developer"})
    write(other, alice, [comment("a1", "alice", "Mine.")])
    write(other, bob, [comment("a1", "alice", "Rewritten, and that is this plugin's affair.")])
    write(other, bob, "anything")
    steps = [{"id": f"i{n}", "text": "x"} for n in range(60)]
    write(other, bob, {"checklist": steps}, key="card:c1")


def test_a_superuser_acts_as_an_owner(people: dict[str, Any], board: Project) -> None:
    alice, dave = people["alice"], people["dave"]
    write(board, alice, [comment("a1", "alice", "Mine.")])
    dave.is_superuser = True
    dave.save(update_fields=["is_superuser"])
    write(board, dave, [])
    assert stored(board, alice) == []


def test_a_guest_reads_no_history_of_comments_while_writers_and_cards_keep_theirs(
    people: dict[str, Any], board: Project
) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    write(board, bob, [comment("b1", "bob", "Something I regret.")])
    write(board, bob, [])
    with pytest.raises(KanbanError) as raised:
        project_kv_history(target=Target(user=carol, project_id=board.id), key=KEY)
    assert raised.value.code == "forbidden"
    assert project_kv_get(target=Target(user=carol, project_id=board.id), key=KEY) is not None
    versions = project_kv_history(target=Target(user=alice, project_id=board.id), key=KEY)[
        "entries"
    ]
    assert [v["value"] for v in versions] == [[], [comment("b1", "bob", "Something I regret.")]]
    write(board, bob, {"id": "c1", "title": "A card"}, key="card:c1")
    card = project_kv_history(target=Target(user=carol, project_id=board.id), key="card:c1")[
        "entries"
    ]
    assert card[0]["value"]["title"] == "A card"
