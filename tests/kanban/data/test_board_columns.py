"""A new Board has its columns from the moment it is made, whatever made it, so an agent
can add a card to a board nobody has opened yet; columns someone wrote are never replaced.
alice owns the boards, bob develops on them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from kanban.data.board.cards import board_action
from kanban.data.board.layout import COLUMNS_KEY, DEFAULT_COLUMNS
from kanban.data.kv import Provenance, project_kv_delete, project_kv_get, project_kv_set
from kanban.data.target import Target
from kanban.models import Project
from storage.errors import KanbanError
from tests.factories import a_board, users

pytestmark = pytest.mark.django_db

AGENT = Provenance(via="mcp", token="kb_agent00")
TO_DO_DOING_DONE = [
    {"id": "todo", "title": "To do", "wip": 0},
    {"id": "doing", "title": "Doing", "wip": 0},
    {"id": "done", "title": "Done", "wip": 0},
]


@pytest.fixture
def people() -> dict[str, User]:
    alice, bob = users("alice", "bob")
    return {"alice": alice, "bob": bob}


def columns_of(board: Project, who: User) -> Any:
    entry = project_kv_get(target=Target(user=who, project_id=board.id), key=COLUMNS_KEY)
    return None if entry is None else entry.value


def adds(board: Project, who: User, **arguments: Any) -> Any:
    return board_action(
        action="add", user=who, project_id=board.id, arguments=arguments, provenance=AGENT
    )


def test_a_new_board_starts_with_to_do_doing_and_done_and_no_wip_limit(
    people: dict[str, User],
) -> None:
    board = a_board(owner=people["alice"], members={people["bob"]: "developer"})
    assert columns_of(board, people["alice"]) == TO_DO_DOING_DONE == list(DEFAULT_COLUMNS)
    entry = project_kv_get(
        target=Target(user=people["alice"], project_id=board.id), key=COLUMNS_KEY
    )
    assert entry is not None and entry.source is not None
    assert (entry.source["user"], entry.source["via"]) == ("alice", "template")
    card = adds(board, people["bob"], title="Before anyone looked", column="todo")
    assert card["column"] == "todo"


@pytest.mark.parametrize("template", ["inventory", "blank"])
def test_other_templates_get_no_board_columns(people: dict[str, User], template: str) -> None:
    board = a_board(owner=people["alice"], template=template)
    assert columns_of(board, people["alice"]) is None


def test_board_cards_gives_a_board_without_columns_the_defaults_as_the_page_does(
    people: dict[str, User],
) -> None:
    """A Board whose project came another way (a package import, columns deleted): the
    first card an agent adds finds the columns the page would write on opening it."""
    board = a_board(owner=people["alice"], members={people["bob"]: "developer"})
    project_kv_delete(
        target=Target(user=people["alice"], project_id=board.id), key=COLUMNS_KEY, provenance=AGENT
    )
    listed = board_action(
        action="list", user=people["bob"], project_id=board.id, arguments={}, provenance=AGENT
    )
    assert listed["columns"] == TO_DO_DOING_DONE, "a read shows them without writing"
    assert columns_of(board, people["alice"]) is None
    assert adds(board, people["bob"], title="First", column="doing")["column"] == "doing"
    assert columns_of(board, people["alice"]) == TO_DO_DOING_DONE


def test_columns_someone_wrote_are_never_replaced(people: dict[str, User]) -> None:
    board = a_board(owner=people["alice"], members={people["bob"]: "developer"})
    own = [{"id": "backlog", "title": "Backlog", "wip": 0}]
    project_kv_set(
        target=Target(user=people["alice"], project_id=board.id),
        key=COLUMNS_KEY,
        value=own,
        provenance=AGENT,
    )
    assert adds(board, people["bob"], title="Later", column="backlog")["column"] == "backlog"
    with pytest.raises(KanbanError) as refused:
        adds(board, people["bob"], title="Nowhere", column="todo")
    assert refused.value.details["field"] == "column" and "backlog" in refused.value.message
    assert columns_of(board, people["alice"]) == own


def test_the_servers_columns_are_the_board_pages_own(tmp_path: Path) -> None:
    """board-core.js DEFAULT_COLUMNS, which the page writes on a board without any, are
    the same columns in the same order, with the same (no) WIP limits."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node")
    core = Path(settings.BASE_DIR) / "bridge_js" / "plugins" / "board" / "board-core.js"
    script = (
        f"import {{ DEFAULT_COLUMNS }} from {json.dumps(core.as_uri())};"
        "console.log(JSON.stringify(DEFAULT_COLUMNS));"
    )
    out = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True
    )
    page = json.loads(out.stdout)
    assert page == list(DEFAULT_COLUMNS)


def test_an_agent_reorders_columns_keeping_a_column_a_person_added_meanwhile(
    people: dict[str, User],
) -> None:
    board = a_board(owner=people["alice"], members={people["bob"]: "developer"})

    def act(action: str, **arguments: Any) -> Any:
        return board_action(
            action=action,
            user=people["bob"],
            project_id=board.id,
            arguments=arguments,
            provenance=AGENT,
        )

    # A person adds Review after the agent last read the columns.
    project_kv_set(
        target=Target(user=people["alice"], project_id=board.id),
        key=COLUMNS_KEY,
        value=[*TO_DO_DOING_DONE, {"id": "review", "title": "Review", "wip": 2}],
        provenance=AGENT,
    )
    moved = act("column_reorder", column="done", position=0)
    assert [c["id"] for c in moved["columns"]] == ["done", "todo", "doing", "review"]
    assert moved["column"]["id"] == "done"
    assert [c["id"] for c in columns_of(board, people["alice"])] == [
        "done",
        "todo",
        "doing",
        "review",
    ]
    act("column_reorder", column="done", position=10)
    assert [c["id"] for c in columns_of(board, people["alice"])][-1] == "done"
    with pytest.raises(KanbanError) as refused:
        act("column_reorder", column="nowhere", position=0)
    assert (refused.value.code, refused.value.details["field"]) == ("not_found", "column")
