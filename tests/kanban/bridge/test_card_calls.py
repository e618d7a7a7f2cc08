"""The Board's card transfers over the bridge, as a plugin page asks them: bob, a developer
on Launch and Ops and a guest on Press, lists where a Launch card may go (Launch and Ops, not
Press, nor dave's board he is not on), copies one to Ops and moves another there; carol, a
guest on Launch, may list and copy to her own board but not move; a frame naming a related
project, or a target that is no board id, is refused before anything is written."""

from __future__ import annotations

from typing import Any

import pytest

from kanban.bridge.frames import check_frame
from kanban.bridge.ops import bridge_call
from kanban.data.board import layout
from storage import engine
from storage.errors import ErrorCode, KanbanError
from storage.namespaces import project_kv
from tests.factories import a_board, board_data, users

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> dict[str, Any]:
    alice, bob, carol, dave = users("alice", "bob", "carol", "dave")
    launch = a_board(owner=alice, name="Launch", members={bob: "developer", carol: "guest"})
    ops = a_board(owner=alice, name="Ops", members={bob: "developer"})
    press = a_board(owner=alice, name="Press", members={bob: "guest"})
    mine = a_board(owner=carol, name="Carol's")
    a_board(owner=dave, name="Dave's")
    board_data(launch, cards={"c1": {"title": "Broken login"}, "c2": {"title": "Press kit"}})
    return {"bob": bob, "carol": carol, "launch": launch, "ops": ops, "press": press, "mine": mine}


def call(user: Any, board: Any, op: str, **frame: Any) -> Any:
    request = check_frame({"v": 1, "id": 1, "op": op, **frame})
    return bridge_call(user=user, consumer_id=board.id, page="index.html", request=request)


def index(board: Any) -> list[str]:
    stored = engine.get_value(project_kv(board.id, layout.INDEX_KEY))
    return [] if stored is None else layout.normalize_index(stored.value)


def test_bob_lists_the_boards_he_can_write_with_their_columns(world: dict[str, Any]) -> None:
    targets = call(world["bob"], world["launch"], "cards.targets")
    assert [(t["name"], t["current"]) for t in targets] == [("Launch", True), ("Ops", False)]
    assert [c["title"] for c in targets[1]["columns"]] == ["To do", "Doing", "Done"]


def test_bob_copies_one_card_to_ops_and_moves_another_there(world: dict[str, Any]) -> None:
    launch, ops = world["launch"], world["ops"]
    copied = call(
        world["bob"],
        launch,
        "cards.copy",
        key="c1",
        value={"targetProject": str(ops.id), "column": "doing"},
    )
    assert copied["column"] == "doing" and not copied["moved"]
    moved = call(world["bob"], launch, "cards.move", key="c2", value={"targetProject": str(ops.id)})
    assert moved["moved"]
    assert index(launch) == ["c1"], "the moved card left, the copied one stayed"
    assert sorted(index(ops)) == sorted([copied["card"], moved["card"]])


def test_carol_a_guest_copies_to_her_own_board_but_may_not_move(world: dict[str, Any]) -> None:
    launch, mine = world["launch"], world["mine"]
    targets = call(world["carol"], launch, "cards.targets")
    assert [(t["name"], t["current"]) for t in targets] == [("Carol's", False)]
    call(world["carol"], launch, "cards.copy", key="c1", value={"targetProject": str(mine.id)})
    assert len(index(mine)) == 1
    with pytest.raises(KanbanError) as refused:
        call(world["carol"], launch, "cards.move", key="c1", value={"targetProject": str(mine.id)})
    assert refused.value.code == ErrorCode.FORBIDDEN
    assert index(launch) == ["c1", "c2"]


@pytest.mark.parametrize(
    "frame",
    [
        {"key": "c1", "value": {"targetProject": "launch"}},
        {"key": "c1", "value": {"targetProject": None}},
        {"key": "c1", "alias": "inventory", "value": {"targetProject": "0" * 32}},
    ],
)
def test_a_frame_without_a_board_id_or_naming_a_related_project_is_refused(
    world: dict[str, Any], frame: dict[str, Any]
) -> None:
    with pytest.raises(KanbanError) as refused:
        call(world["bob"], world["launch"], "cards.copy", **frame)
    assert refused.value.code == ErrorCode.INVALID_ARGUMENT
    assert index(world["ops"]) == []


def test_the_frame_carries_only_the_card_and_the_target(world: dict[str, Any]) -> None:
    with pytest.raises(KanbanError) as refused:
        check_frame(
            {
                "v": 1,
                "id": 1,
                "op": "cards.copy",
                "key": "c1",
                "value": {"targetProject": "x", "project": "y"},
            }
        )
    assert refused.value.code == ErrorCode.INVALID_ARGUMENT
    with pytest.raises(KanbanError):
        check_frame({"v": 1, "id": 1, "op": "cards.move", "value": {"targetProject": "x"}})
