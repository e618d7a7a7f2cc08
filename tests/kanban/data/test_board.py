"""Board cards as an agent changes them: every action keeps the Board's layout whole, and a
person writing the same board at the same time loses nothing. alice owns the demo Board,
bob develops on it, carol is a guest; the agent acts as bob."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connections

from kanban.data.board.cards import board_action
from kanban.data.board.comments import MAX_COMMENT
from kanban.data.board.layout import MAX_CHECKLIST
from kanban.data.board.ranks import rank_between, rank_for_placement
from kanban.data.demo import demo_load
from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from kanban.data.notifications import notifications_list
from kanban.data.target import Target
from kanban.models import Project
from kanban.projects.lifecycle import project_create
from storage.errors import KanbanError

AGENT = Provenance(via="mcp", token="kb_agent00")
PERSON = Provenance(via="bridge", page="/boards/x/")


@pytest.fixture
def demo(transactional_db: None) -> dict[str, Any]:
    assert demo_load()
    return {
        "board": Project.objects.get(name="Board"),
        **{user.username: user for user in User.objects.all()},
    }


def act(demo: dict[str, Any], action: str, who: str = "bob", **arguments: Any) -> Any:
    return board_action(
        action=action,
        user=demo[who],
        project_id=demo["board"].id,
        arguments=arguments,
        provenance=AGENT,
    )


def refused(demo: dict[str, Any], action: str, **arguments: Any) -> KanbanError:
    with pytest.raises(KanbanError) as raised:
        act(demo, action, **arguments)
    return raised.value


def index(demo: dict[str, Any]) -> list[str]:
    entry = project_kv_get(
        target=Target(user=demo["alice"], project_id=demo["board"].id), key="board:cards"
    )
    assert entry is not None
    return list(entry.value)


def test_list_orders_cards_as_the_board_shows_them_and_filters_and_pages(
    demo: dict[str, Any],
) -> None:
    listed = act(demo, "list")
    assert [c["id"] for c in listed["columns"]] == ["todo", "doing", "done"]
    assert [c["id"] for c in listed["cards"]] == ["c1", "c2", "c3", "c4", "c5"]
    assert listed["cursor"] is None and all(c["revision"] for c in listed["cards"])
    assert [c["id"] for c in act(demo, "list", column="doing")["cards"]] == ["c3", "c4"]
    assert [c["id"] for c in act(demo, "list", assignee="BOB")["cards"]] == ["c2", "c3"]
    assert [c["id"] for c in act(demo, "list", label="bug")["cards"]] == ["c3"]
    assert [c["id"] for c in act(demo, "list", text="login fix")["cards"]] == ["c3"]
    first = act(demo, "list", limit=2)
    second = act(demo, "list", limit=2, cursor=first["cursor"])
    third = act(demo, "list", limit=2, cursor=second["cursor"])
    assert [c["id"] for page in (first, second, third) for c in page["cards"]] == [
        "c1",
        "c2",
        "c3",
        "c4",
        "c5",
    ]
    assert third["cursor"] is None
    assert refused(demo, "list", cursor="nonsense").code == "invalid_argument"


def test_add_puts_the_card_then_its_id_on_the_index_recording_the_agent(
    demo: dict[str, Any],
) -> None:
    card = act(
        demo,
        "add",
        title="From an agent",
        column="todo",
        labels=["ops"],
        assignees=["alice", "Bob"],
        due="2027-01-31",
    )
    assert card["column"] == "todo" and card["assignees"] == ["alice", "bob"]
    assert index(demo)[-1] == card["id"]
    todo = [c["id"] for c in act(demo, "list", column="todo")["cards"]]
    assert todo[-1] == card["id"], "added at the end of its column"
    stored = project_kv_get(
        target=Target(user=demo["alice"], project_id=demo["board"].id), key=f"card:{card['id']}"
    )
    assert (
        stored is not None and stored.value["assignee"] == "alice"
    )  # what one-assignee Boards show
    assert stored.source is not None
    assert (stored.source["via"], stored.source["token"], stored.source["user"]) == (
        "mcp",
        "kb_agent00",
        "bob",
    )


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"column": "todo"}, "title"),
        ({"title": " ", "column": "todo"}, "title"),
        ({"title": "x", "column": "nowhere"}, "column"),
        ({"title": "x", "column": "todo", "assignees": ["mallory"]}, "assignees"),
        ({"title": "x", "column": "todo", "due": "tomorrow"}, "due"),
        ({"title": "x", "column": "todo", "due": "2027-13-45"}, "due"),
        ({"title": "x", "column": "todo", "due": "2027-02-30"}, "due"),
        ({"title": "x", "column": "todo", "due": "2027-1-05"}, "due"),
        ({"title": "x", "column": "todo", "labels": ["a" * 41]}, "labels"),
        ({"title": "x" * 201, "column": "todo"}, "title"),
    ],
)
def test_a_bad_add_is_refused_naming_its_field_and_writes_nothing(
    demo: dict[str, Any], arguments: dict[str, Any], field: str
) -> None:
    before = index(demo)
    error = refused(demo, "add", **arguments)
    assert (error.code, error.details.get("field")) == ("invalid_argument", field)
    assert index(demo) == before


def test_a_person_adding_while_the_agent_adds_loses_nothing(demo: dict[str, Any]) -> None:
    """The bug this tool exists for: the agent's index write no longer erases a card a
    person added between the agent's read and write."""
    board, bob, alice = demo["board"], demo["bob"], demo["alice"]
    person_ids = []

    def person_adds(n: int) -> None:
        try:
            for i in range(5):
                card_id = f"p{n}x{i}"
                project_kv_set(
                    target=Target(user=alice, project_id=board.id),
                    key=f"card:{card_id}",
                    value={"id": card_id, "title": card_id, "column": "todo", "rank": "z"},
                    provenance=PERSON,
                )
                while True:  # as the Board's updateValue does
                    entry = project_kv_get(
                        target=Target(user=alice, project_id=board.id), key="board:cards"
                    )
                    assert entry is not None
                    try:
                        project_kv_set(
                            target=Target(user=alice, project_id=board.id),
                            key="board:cards",
                            value=[*entry.value, card_id],
                            expected_revision=entry.revision,
                            provenance=PERSON,
                        )
                        break
                    except KanbanError as error:
                        assert error.code == "conflict"
                person_ids.append(card_id)
        finally:
            connections.close_all()

    agent_ids = []

    def agent_adds() -> None:
        try:
            for i in range(5):
                card = board_action(
                    action="add",
                    user=bob,
                    project_id=board.id,
                    arguments={"title": f"agent {i}", "column": "doing"},
                    provenance=AGENT,
                )
                agent_ids.append(card["id"])
        finally:
            connections.close_all()

    threads = [threading.Thread(target=agent_adds), threading.Thread(target=person_adds, args=(1,))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(agent_ids) == len(person_ids) == 5
    on_board = set(index(demo))
    assert set(agent_ids) | set(person_ids) <= on_board
    assert len(index(demo)) == 15


def test_update_changes_only_the_fields_given_and_names_a_field_changed_meanwhile(
    demo: dict[str, Any],
) -> None:
    read = act(demo, "get", id="c1")
    # Someone moves the card and retitles it after the agent read it.
    board, alice = demo["board"], demo["alice"]
    entry = project_kv_get(target=Target(user=alice, project_id=board.id), key="card:c1")
    assert entry is not None
    project_kv_set(
        target=Target(user=alice, project_id=board.id),
        key="card:c1",
        value={**entry.value, "title": "Alice's title", "column": "doing"},
        provenance=PERSON,
    )
    # A field nobody else touched merges: the move stays.
    updated = act(demo, "update", id="c1", labels=["docs", "urgent"], revision=read["revision"])
    assert (updated["labels"], updated["column"], updated["title"]) == (
        ["docs", "urgent"],
        "doing",
        "Alice's title",
    )
    # The title changed since the agent's read: a conflict naming it, nothing written.
    error = refused(demo, "update", id="c1", title="Agent's title", revision=read["revision"])
    assert error.code == "conflict" and error.details["fields"] == ["title"]
    assert error.details["current"]["title"] == "Alice's title"
    assert act(demo, "get", id="c1")["title"] == "Alice's title"
    # Read again, then the same change goes through.
    again = act(demo, "update", id="c1", title="Agent's title", revision=updated["revision"])
    assert again["title"] == "Agent's title"
    assert refused(demo, "update", id="c1").code == "invalid_argument"
    assert refused(demo, "update", id="nope", title="x").code == "not_found"


def test_update_sets_and_clears_the_due_date_and_refuses_a_day_that_does_not_exist(
    demo: dict[str, Any],
) -> None:
    dated = act(demo, "update", id="c1", due="2028-02-29")
    assert dated["due"] == "2028-02-29", "a leap day exists"
    for impossible in ("2027-02-29", "2027-13-45", "2027-04-31", "0000-01-01"):
        error = refused(demo, "update", id="c1", due=impossible)
        assert (error.code, error.details["field"]) == ("invalid_argument", "due"), impossible
    cleared = act(demo, "update", id="c1", due=None, revision=dated["revision"])
    assert cleared["due"] is None and act(demo, "get", id="c1")["due"] is None


def test_a_stored_day_that_does_not_exist_reads_as_no_due_date(demo: dict[str, Any]) -> None:
    """Anyone who may write can store anything under card:<id>; a read shows what the
    Board would, and never hands an agent a date it would refuse."""
    board, alice = demo["board"], demo["alice"]
    entry = project_kv_get(target=Target(user=alice, project_id=board.id), key="card:c1")
    assert entry is not None
    project_kv_set(
        target=Target(user=alice, project_id=board.id),
        key="card:c1",
        value={**entry.value, "due": "2027-02-30"},
        provenance=PERSON,
    )
    assert act(demo, "get", id="c1")["due"] is None


def test_move_places_a_card_before_or_after_another_and_never_rewrites_others(
    demo: dict[str, Any],
) -> None:
    others = {c["id"]: c["revision"] for c in act(demo, "list")["cards"] if c["id"] != "c5"}
    act(demo, "move", id="c5", column="doing", before="c4")
    assert [c["id"] for c in act(demo, "list", column="doing")["cards"]] == ["c3", "c5", "c4"]
    act(demo, "move", id="c5", column="doing", after="c4")
    assert [c["id"] for c in act(demo, "list", column="doing")["cards"]] == ["c3", "c4", "c5"]
    act(demo, "move", id="c5", column="todo")
    assert [c["id"] for c in act(demo, "list", column="todo")["cards"]][-1] == "c5"
    assert {c["id"]: c["revision"] for c in act(demo, "list")["cards"] if c["id"] != "c5"} == others
    assert refused(demo, "move", id="c5", column="doing", before="c1").code == "invalid_argument"
    assert refused(demo, "move", id="c5", column="doing", before="c3", after="c4").code == (
        "invalid_argument"
    )


def test_archive_and_restore(demo: dict[str, Any]) -> None:
    act(demo, "archive", id="c2")
    assert "c2" not in [c["id"] for c in act(demo, "list")["cards"]]
    assert [c["id"] for c in act(demo, "list", archived=True)["cards"]] == ["c2"]
    assert "c2" in index(demo), "archived cards stay on the index, as the Board keeps them"
    act(demo, "restore", id="c2")
    assert "c2" in [c["id"] for c in act(demo, "list")["cards"]]


def test_a_guest_reads_but_cannot_change_cards(demo: dict[str, Any]) -> None:
    assert act(demo, "get", who="carol", id="c1")["id"] == "c1"
    with pytest.raises(KanbanError) as raised:
        act(demo, "archive", who="carol", id="c1")
    assert raised.value.code == "forbidden"


def test_a_project_whose_plugin_is_not_the_board_is_refused(demo: dict[str, Any]) -> None:
    for project in (Project.objects.get(name="Inventory"), project_create(name="Blank")):
        with pytest.raises(KanbanError) as raised:
            board_action(
                action="list",
                user=demo["alice"],
                project_id=project.id,
                arguments={},
                provenance=AGENT,
            )
        assert raised.value.code == "invalid_argument"
        assert "not the built-in Board" in raised.value.message


RANK_PAIRS = [
    (None, None),
    (None, "i"),
    ("i", None),
    ("a", "b"),
    ("a", "a1"),
    ("az", "b"),
    ("0001", "0002"),
    ("zz", None),
    (None, "01"),
    ("i", "i0001"),
    ("5", "5z"),
]


def test_ranks_are_the_boards_own(tmp_path: Path) -> None:
    """The Python ranks equal board-core.js's for the same neighbours."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node")
    core = Path(settings.BASE_DIR) / "bridge_js" / "plugins" / "board" / "board-core.js"
    script = (
        f"import {{ rankBetween }} from {json.dumps(core.as_uri())};"
        f"const pairs = {json.dumps(RANK_PAIRS)};"
        "console.log(JSON.stringify(pairs.map(([a, b]) => rankBetween(a, b))));"
    )
    out = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == [rank_between(a, b) for a, b in RANK_PAIRS]
    assert rank_for_placement(["a", "a", "b"], 1) == rank_between("a", "b")


def test_an_agents_assignment_lands_in_the_new_assignees_inbox_marked_as_the_agents(
    demo: dict[str, Any],
) -> None:
    added = act(demo, "add", title="Ship", column="todo", assignees=["alice", "bob"])
    assert added["notified"] == ["alice"], "never the agent's own person"
    updated = act(demo, "update", id=added["id"], assignees=["alice", "bob", "carol"])
    assert updated["notified"] == ["carol"], "only who is new on the card"
    assert "notified" not in act(demo, "update", id=added["id"], title="Ship it")
    [item] = notifications_list(user=demo["carol"])["notifications"]
    assert (item["text"], item["via"], item["card"]) == ("assigned you “Ship”", "mcp", added["id"])
    assert item["sender"]["username"] == "bob"


def test_a_card_has_a_start_date_set_and_cleared_like_its_due_date(demo: dict[str, Any]) -> None:
    card = act(demo, "add", title="Plan", column="todo", start="2027-01-04", due="2027-01-31")
    assert (card["start"], card["due"]) == ("2027-01-04", "2027-01-31")
    error = refused(demo, "update", id=card["id"], start="2027-02-30")
    assert (error.code, error.details["field"]) == ("invalid_argument", "start")
    assert act(demo, "update", id=card["id"], start=None)["start"] is None
    assert act(demo, "get", id="c1")["start"] is None, "a card without one"


def test_a_trello_cards_start_shows_as_the_page_shows_it(demo: dict[str, Any]) -> None:
    board, alice = demo["board"], demo["alice"]
    entry = project_kv_get(target=Target(user=alice, project_id=board.id), key="card:c1")
    assert entry is not None
    project_kv_set(
        target=Target(user=alice, project_id=board.id),
        key="card:c1",
        value={**entry.value, "trello": {"start": "2026-11-30T09:00:00.000Z"}},
        provenance=PERSON,
    )
    assert act(demo, "get", id="c1")["start"] == "2026-11-30"


def test_add_takes_a_checklist_labels_assignees_dates_and_a_first_comment_in_one_call(
    demo: dict[str, Any],
) -> None:
    card = act(
        demo,
        "add",
        title="Release 2.0",
        column="todo",
        checklist=["Freeze", " Tag ", "Build", "Publish", "Announce"],
        labels=["release"],
        assignees=["alice", "bob"],
        start="2027-01-04",
        due="2027-01-31",
        text="Started from the release template.",
    )
    assert [item["text"] for item in card["checklist"]] == [
        "Freeze",
        "Tag",
        "Build",
        "Publish",
        "Announce",
    ]
    assert not any(item["done"] for item in card["checklist"])
    assert len({item["id"] for item in card["checklist"]}) == 5
    assert (card["labels"], card["assignees"]) == (["release"], ["alice", "bob"])
    assert (card["start"], card["due"], card["commentCount"]) == ("2027-01-04", "2027-01-31", 1)
    comments = project_kv_get(
        target=Target(user=demo["alice"], project_id=demo["board"].id), key=f"comments:{card['id']}"
    )
    assert comments is not None
    [said] = comments.value
    assert (said["author"], said["text"]) == ("bob", "Started from the release template.")
    answered = {name: value for name, value in card.items() if name != "notified"}
    assert act(demo, "get", id=card["id"]) == answered, "the answer is the card as stored"


@pytest.mark.parametrize(
    ("arguments", "field", "code"),
    [
        ({"checklist": ["ok", "  "]}, "checklist", "invalid_argument"),
        ({"checklist": ["ok", 3]}, "checklist", "invalid_argument"),
        ({"checklist": "one item"}, "checklist", "invalid_argument"),
        ({"checklist": ["x" * 201]}, "checklist", "invalid_argument"),
        ({"checklist": ["item"] * (MAX_CHECKLIST + 1)}, "checklist", "too_large"),
        ({"text": "   "}, "text", "invalid_argument"),
        ({"text": "x" * (MAX_COMMENT + 1)}, "text", "invalid_argument"),
        ({"checklist": ["fine"], "assignees": ["mallory"]}, "assignees", "invalid_argument"),
        ({"checklist": ["fine"], "text": "hi", "due": "2027-02-30"}, "due", "invalid_argument"),
    ],
)
def test_a_compound_add_with_one_bad_part_writes_nothing_at_all(
    demo: dict[str, Any], arguments: dict[str, Any], field: str, code: str
) -> None:
    before = index(demo)
    error = refused(demo, "add", title="Half a card", column="todo", **arguments)
    assert (error.code, error.details.get("field")) == (code, field)
    assert index(demo) == before
    assert not any(c["title"] == "Half a card" for c in act(demo, "list")["cards"])
