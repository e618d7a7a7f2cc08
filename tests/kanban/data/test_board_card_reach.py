"""board_cards beyond its own board: an agent copies or moves a card to another board and
searches cards across boards, through the same services REST and the bridge use
(card_transfer, search), and never past its token: a token reaches only its own boards.
alice owns Launch, Ops, Press and Side; bob develops on Launch, Ops and Side and guests on
Press; his agent's token names Launch and Ops."""

from __future__ import annotations

from typing import Any

import pytest

from kanban.accounts.tokens import token_create
from kanban.data.board import layout
from kanban.data.board.cards import board_action
from kanban.data.kv import Provenance
from storage import engine
from storage.errors import KanbanError
from storage.namespaces import project_kv
from tests.factories import a_board, board_data, users

pytestmark = pytest.mark.django_db

AGENT = Provenance(via="mcp", token="kb_agent00")


@pytest.fixture
def world() -> dict[str, Any]:
    alice, bob = users("alice", "bob")
    launch = a_board(owner=alice, name="Launch", members={bob: "developer"})
    ops = a_board(owner=alice, name="Ops", members={bob: "developer"})
    press = a_board(owner=alice, name="Press", members={bob: "guest"})
    side = a_board(owner=alice, name="Side", members={bob: "developer"})
    board_data(launch, cards={"c1": {"title": "Broken login"}, "c2": {"title": "Press kit"}})
    board_data(side, cards={"s1": {"title": "Login page copy"}})
    token, _ = token_create(user=bob, project_id=launch.id, more_project_ids=[ops.id])
    return {"bob": bob, "launch": launch, "ops": ops, "press": press, "side": side, "token": token}


def act(world: dict[str, Any], action: str, *, token: bool = True, **arguments: Any) -> Any:
    return board_action(
        action=action,
        user=world["bob"],
        project_id=world["launch"].id,
        arguments=arguments,
        provenance=AGENT,
        token=world["token"] if token else None,
    )


def refused(world: dict[str, Any], action: str, **arguments: Any) -> KanbanError:
    with pytest.raises(KanbanError) as raised:
        act(world, action, **arguments)
    return raised.value


def index(board: Any) -> list[str]:
    stored = engine.get_value(project_kv(board.id, layout.INDEX_KEY))
    return [] if stored is None else layout.normalize_index(stored.value)


def test_an_agent_copies_and_moves_a_card_to_a_board_its_token_reaches(
    world: dict[str, Any],
) -> None:
    ops = world["ops"]
    copied = act(world, "copy_to_board", id="c1", board=str(ops.id), column="doing")
    assert (copied["projectId"], copied["column"], copied["moved"]) == (str(ops.id), "doing", False)
    moved = act(world, "move_to_board", id="c2", board=str(ops.id))
    assert moved["moved"] and index(world["launch"]) == ["c1"]
    assert sorted(index(ops)) == sorted([copied["card"], moved["card"]])


def test_a_board_outside_the_token_or_the_role_is_refused_and_nothing_moves(
    world: dict[str, Any],
) -> None:
    side, press = world["side"], world["press"]
    error = refused(world, "copy_to_board", id="c1", board=str(side.id))
    assert error.code == "not_found", "bob may write Side, his token does not reach it"
    assert index(side) == ["s1"]
    error = refused(world, "copy_to_board", id="c1", board="ops")
    assert (error.code, error.details["field"]) == ("invalid_argument", "board")
    with pytest.raises(KanbanError) as guest:
        act(world, "move_to_board", token=False, id="c1", board=str(press.id))
    assert guest.value.code == "forbidden", "without a token: bob's own role on Press"
    assert index(world["launch"]) == ["c1", "c2"] and index(press) == []


def test_search_finds_cards_on_the_boards_the_token_reaches_only(world: dict[str, Any]) -> None:
    found = act(world, "search", text="login")
    assert [(r["board"]["name"], r["card"]["id"]) for r in found["results"]] == [("Launch", "c1")]
    assert found["cursor"] is None
    everywhere = act(world, "search", token=False, text="login")
    assert [r["board"]["name"] for r in everywhere["results"]] == ["Launch", "Side"]
    paged = act(world, "search", token=False, text="login", limit=1)
    assert paged["cursor"] == "1"
    rest = act(world, "search", token=False, text="login", limit=1, cursor=paged["cursor"])
    assert [r["board"]["name"] for r in rest["results"]] == ["Side"]
    error = refused(world, "search", text="  ")
    assert (error.code, error.details["field"]) == ("invalid_argument", "text")
