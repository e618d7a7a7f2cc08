"""An agent comments on a card and keeps its checklist the way a person does on the Board:
the same rules (kanban.data.board.comments, layout), compare-and-set on what is stored, so a
person ticking another item meanwhile keeps their tick. alice owns the demo Board, bob
develops on it, carol is a guest; the agent acts as bob."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from kanban.data.board.cards import board_action
from kanban.data.board.comments import MAX_COMMENT
from kanban.data.board.layout import MAX_CHECKLIST
from kanban.data.demo import demo_load
from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from kanban.data.target import Target
from kanban.models import Project
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


def refused(demo: dict[str, Any], action: str, who: str = "bob", **arguments: Any) -> KanbanError:
    with pytest.raises(KanbanError) as raised:
        act(demo, action, who, **arguments)
    return raised.value


def stored(demo: dict[str, Any], key: str) -> Any:
    entry = project_kv_get(target=Target(user=demo["alice"], project_id=demo["board"].id), key=key)
    return None if entry is None else entry.value


def test_an_agent_comments_as_its_person_and_the_card_counts_it(demo: dict[str, Any]) -> None:
    before = len(stored(demo, "comments:c1") or [])
    said = act(demo, "comment", id="c1", text="  Deployed to staging.  ")
    comment = said["comment"]
    assert (comment["author"], comment["text"], comment["edited"]) == (
        "bob",
        "Deployed to staging.",
        None,
    )
    assert comment["at"].endswith("Z") and comment["id"], "the page's toISOString format"
    assert stored(demo, "comments:c1")[-1] == comment
    assert said["commentCount"] == before + 1 == act(demo, "get", id="c1")["commentCount"]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"id": "c1"}, "text"),
        ({"id": "c1", "text": "   "}, "text"),
        ({"id": "c1", "text": "x" * (MAX_COMMENT + 1)}, "text"),
        ({"id": "c1", "text": 7}, "text"),
        ({"text": "Hello"}, "id"),
    ],
)
def test_a_comment_the_board_would_refuse_is_refused_and_nothing_is_written(
    demo: dict[str, Any], arguments: dict[str, Any], field: str
) -> None:
    before = stored(demo, "comments:c1")
    error = refused(demo, "comment", **arguments)
    assert (error.code, error.details.get("field")) == ("invalid_argument", field)
    assert stored(demo, "comments:c1") == before
    assert refused(demo, "comment", id="nope", text="Hi").code == "not_found"


def test_a_guest_may_not_comment(demo: dict[str, Any]) -> None:
    assert refused(demo, "comment", who="carol", id="c1", text="Me too").code == "forbidden"


def test_an_agent_adds_and_ticks_checklist_items_keeping_a_persons_tick_meanwhile(
    demo: dict[str, Any],
) -> None:
    first = act(demo, "checklist_add", id="c2", text=" Write the notes ")
    second = act(demo, "checklist_add", id="c2", text="Tag the release")
    assert [i["text"] for i in second["checklist"]][-2:] == ["Write the notes", "Tag the release"]
    notes, tag = second["checklist"][-2]["id"], second["checklist"][-1]["id"]
    assert first["checklist"][-1]["id"] == notes and notes != tag
    # A person ticks "Tag the release" on the Board after the agent's read.
    card = stored(demo, "card:c2")
    project_kv_set(
        target=Target(user=demo["alice"], project_id=demo["board"].id),
        key="card:c2",
        value={
            **card,
            "checklist": [{**i, "done": i["id"] == tag or i["done"]} for i in card["checklist"]],
        },
        provenance=PERSON,
    )
    ticked = act(demo, "checklist_tick", id="c2", item=notes, done=True)
    done = {i["id"]: i["done"] for i in ticked["checklist"]}
    assert done[notes] is True and done[tag] is True, "the person's tick stands"
    unticked = act(demo, "checklist_tick", id="c2", item=notes, done=False)
    assert {i["id"]: i["done"] for i in unticked["checklist"]}[notes] is False
    assert unticked["revision"] != ticked["revision"]


def test_checklist_refusals_name_their_field_and_write_nothing(demo: dict[str, Any]) -> None:
    before = stored(demo, "card:c2")
    cases = [
        ("checklist_add", {"id": "c2", "text": " "}, "invalid_argument", "text"),
        ("checklist_add", {"id": "c2", "text": "x" * 201}, "invalid_argument", "text"),
        ("checklist_tick", {"id": "c2", "item": "nope", "done": True}, "not_found", "item"),
        ("checklist_tick", {"id": "c2", "item": "nope"}, "invalid_argument", "done"),
        ("checklist_tick", {"id": "c2", "done": True}, "invalid_argument", "item"),
    ]
    for action, arguments, code, field in cases:
        error = refused(demo, action, **arguments)
        assert (error.code, error.details.get("field")) == (code, field), (action, arguments)
    assert stored(demo, "card:c2") == before


def test_a_full_checklist_takes_no_more(demo: dict[str, Any]) -> None:
    card = stored(demo, "card:c2")
    full = [{"id": f"i{n}", "text": f"step {n}", "done": False} for n in range(MAX_CHECKLIST)]
    project_kv_set(
        target=Target(user=demo["alice"], project_id=demo["board"].id),
        key="card:c2",
        value={**card, "checklist": full},
        provenance=PERSON,
    )
    error = refused(demo, "checklist_add", id="c2", text="one more")
    assert error.code == "too_large" and error.details["limit"] == MAX_CHECKLIST
    assert len(stored(demo, "card:c2")["checklist"]) == MAX_CHECKLIST


def test_an_agent_edits_and_deletes_its_own_comment_and_an_owners_agent_any(
    demo: dict[str, Any],
) -> None:
    mine = act(demo, "comment", id="c1", text="First draft")["comment"]
    edited = act(demo, "comment_edit", id="c1", comment=mine["id"], text="Second draft")
    assert (edited["comment"]["text"], edited["comment"]["author"]) == ("Second draft", "bob")
    assert edited["comment"]["edited"].endswith("Z") and edited["comment"]["at"] == mine["at"]
    # Not bob's to change: the server's own comment rules refuse, whoever asks.
    hers = act(demo, "comment", who="alice", id="c1", text="Alice says")["comment"]
    error = refused(demo, "comment_edit", id="c1", comment=hers["id"], text="Bob says")
    assert error.code == "forbidden"
    assert refused(demo, "comment_delete", id="c1", comment=hers["id"]).code == "forbidden"
    assert refused(demo, "comment_delete", id="c1", comment="nope").code == "not_found"
    count = act(demo, "get", id="c1")["commentCount"]
    gone = act(demo, "comment_delete", id="c1", comment=mine["id"])
    assert gone == {"deleted": mine["id"], "commentCount": count - 1}
    # An owner deletes anyone's, as on the Board.
    assert act(demo, "comment_delete", who="alice", id="c1", comment=hers["id"])["deleted"]
    left = [c["id"] for c in stored(demo, "comments:c1")]
    assert mine["id"] not in left and hers["id"] not in left


def test_an_agent_renames_and_removes_checklist_items(demo: dict[str, Any]) -> None:
    added = act(demo, "checklist_add", id="c2", text="Tag it")
    item = added["checklist"][-1]["id"]
    renamed = act(demo, "checklist_rename", id="c2", item=item, text=" Tag the release ")
    assert renamed["checklist"][-1] == {"id": item, "text": "Tag the release", "done": False}
    error = refused(demo, "checklist_rename", id="c2", item=item, text=" ")
    assert (error.code, error.details["field"]) == ("invalid_argument", "text")
    removed = act(demo, "checklist_remove", id="c2", item=item)
    assert item not in [i["id"] for i in removed["checklist"]]
    assert refused(demo, "checklist_remove", id="c2", item=item).code == "not_found"


def test_an_agent_adds_a_column_and_renames_it_and_sets_its_wip_limit(
    demo: dict[str, Any],
) -> None:
    added = act(demo, "column_add", title=" Review ", wip=2)
    column = added["column"]
    assert (column["title"], column["wip"]) == ("Review", 2)
    assert [c["id"] for c in added["columns"]] == ["todo", "doing", "done", column["id"]]
    assert stored(demo, "board:columns")[-1] == column
    card = act(demo, "add", title="In review", column=column["id"])
    assert card["column"] == column["id"]
    renamed = act(demo, "column_update", column=column["id"], title="Code review")
    assert renamed["column"] == {**column, "title": "Code review"}
    unlimited = act(demo, "column_update", column=column["id"], wip=0)
    assert unlimited["column"]["wip"] == 0 and unlimited["column"]["title"] == "Code review"
    assert act(demo, "column_add", title="Later")["column"]["wip"] == 0


@pytest.mark.parametrize(
    ("action", "arguments", "code", "field"),
    [
        ("column_add", {}, "invalid_argument", "title"),
        ("column_add", {"title": "  "}, "invalid_argument", "title"),
        ("column_add", {"title": "x", "wip": 1000}, "invalid_argument", "wip"),
        ("column_add", {"title": "x", "wip": -1}, "invalid_argument", "wip"),
        ("column_add", {"title": "x", "wip": True}, "invalid_argument", "wip"),
        ("column_update", {"column": "todo"}, "invalid_argument", "title"),
        ("column_update", {"column": "nowhere", "title": "x"}, "not_found", "column"),
        ("column_update", {"title": "x"}, "invalid_argument", "column"),
    ],
)
def test_a_column_change_the_board_would_refuse_writes_nothing(
    demo: dict[str, Any], action: str, arguments: dict[str, Any], code: str, field: str
) -> None:
    before = stored(demo, "board:columns")
    error = refused(demo, action, **arguments)
    assert (error.code, error.details.get("field")) == (code, field)
    assert stored(demo, "board:columns") == before
    assert refused(demo, "column_add", who="carol", title="Mine").code == "forbidden"


def test_an_agent_reorders_a_checklist_item_keeping_a_persons_tick_meanwhile(
    demo: dict[str, Any],
) -> None:
    card = act(demo, "add", title="Steps", column="todo", checklist=["one", "two", "three"])
    one, two, three = (item["id"] for item in card["checklist"])
    # A person ticks "two" after the agent's read.
    stored_card = stored(demo, f"card:{card['id']}")
    project_kv_set(
        target=Target(user=demo["alice"], project_id=demo["board"].id),
        key=f"card:{card['id']}",
        value={
            **stored_card,
            "checklist": [{**i, "done": i["id"] == two} for i in stored_card["checklist"]],
        },
        provenance=PERSON,
    )
    moved = act(demo, "checklist_reorder", id=card["id"], item=three, position=0)
    assert [i["id"] for i in moved["checklist"]] == [three, one, two]
    assert [i["done"] for i in moved["checklist"]] == [False, False, True], "the tick stands"
    last = act(demo, "checklist_reorder", id=card["id"], item=three, position=99)
    assert [i["id"] for i in last["checklist"]] == [one, two, three], "past the end: last"
    error = refused(demo, "checklist_reorder", id=card["id"], item="gone", position=0)
    assert (error.code, error.details["field"]) == ("not_found", "item")
    error = refused(demo, "checklist_reorder", id=card["id"], item=one, position=-1)
    assert (error.code, error.details["field"]) == ("invalid_argument", "position")
    assert [i["id"] for i in act(demo, "get", id=card["id"])["checklist"]] == [one, two, three]
