"""An agent keeps the board's label set as the Board's label dialog does (board:labels,
[{name, color}] in Trello's ten base colours): lists it, adds one, renames or recolours
one (the cards carrying it follow), removes one (it comes off every card, as the page's
Delete does). alice owns the board, bob develops on it, carol is a guest; the agent is bob."""

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
from kanban.data.board.labels import COLOURS, MAX_SET
from kanban.data.board.layout import LABELS_KEY
from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from kanban.data.target import Target
from kanban.models import Project
from storage.errors import KanbanError
from tests.factories import a_board, users

pytestmark = pytest.mark.django_db

AGENT = Provenance(via="mcp", token="kb_agent00")


@pytest.fixture
def world() -> dict[str, Any]:
    alice, bob, carol = users("alice", "bob", "carol")
    board = a_board(owner=alice, members={bob: "developer", carol: "guest"})
    project_kv_set(
        target=Target(user=alice, project_id=board.id),
        key=LABELS_KEY,
        value=[{"name": "Bug", "color": "red"}, {"name": "odd", "color": "mauve"}, "junk"],
        provenance=AGENT,
    )
    return {"alice": alice, "bob": bob, "carol": carol, "board": board}


def act(world: dict[str, Any], action: str, who: str = "bob", **arguments: Any) -> Any:
    board: Project = world["board"]
    user: User = world[who]
    return board_action(
        action=action, user=user, project_id=board.id, arguments=arguments, provenance=AGENT
    )


def refused(world: dict[str, Any], action: str, who: str = "bob", **arguments: Any) -> Any:
    with pytest.raises(KanbanError) as raised:
        act(world, action, who, **arguments)
    return raised.value


def stored(world: dict[str, Any]) -> Any:
    entry = project_kv_get(
        target=Target(user=world["alice"], project_id=world["board"].id), key=LABELS_KEY
    )
    return None if entry is None else entry.value


def test_the_set_reads_as_the_page_shows_it(world: dict[str, Any]) -> None:
    assert act(world, "labels") == {"labels": [{"name": "Bug", "color": "red"}]}


def test_an_agent_adds_renames_recolours_and_removes_a_label_and_cards_follow(
    world: dict[str, Any],
) -> None:
    added = act(world, "label_add", label="  Needs   review ", color="sky")
    assert added["label"] == {"name": "Needs review", "color": "sky"}
    assert added["labels"][-1] == added["label"]
    card = act(world, "add", title="Login", column="todo", labels=["bug", "needs review"])
    other = act(world, "add", title="Docs", column="todo", labels=["docs"])
    renamed = act(world, "label_update", label="BUG", name="Defect", color="orange")
    assert renamed["label"] == {"name": "Defect", "color": "orange"}
    assert act(world, "get", id=card["id"])["labels"] == ["Defect", "needs review"]
    recoloured = act(world, "label_update", label="defect", color="purple")
    assert recoloured["label"] == {"name": "Defect", "color": "purple"}
    gone = act(world, "label_remove", label="Needs review")
    assert [label["name"] for label in gone["labels"]] == ["Defect"]
    assert act(world, "get", id=card["id"])["labels"] == ["Defect"]
    assert act(world, "get", id=other["id"])["revision"] == other["revision"], "untouched"
    assert {"name": "odd", "color": "mauve"} in stored(world), "what the page skips is kept"


@pytest.mark.parametrize(
    ("action", "arguments", "code", "field"),
    [
        ("label_add", {"label": "a,b", "color": "red"}, "invalid_argument", "label"),
        ("label_add", {"label": "  ", "color": "red"}, "invalid_argument", "label"),
        ("label_add", {"label": "x" * 41, "color": "red"}, "invalid_argument", "label"),
        ("label_add", {"label": "New", "color": "mauve"}, "invalid_argument", "color"),
        ("label_add", {"label": "bug", "color": "blue"}, "conflict", "label"),
        ("label_update", {"label": "nope", "color": "blue"}, "not_found", "label"),
        ("label_update", {"label": "bug"}, "invalid_argument", "name"),
        ("label_remove", {"label": "nope"}, "not_found", "label"),
    ],
)
def test_a_label_the_dialog_would_refuse_is_refused_and_nothing_is_written(
    world: dict[str, Any], action: str, arguments: dict[str, Any], code: str, field: str
) -> None:
    before = stored(world)
    error = refused(world, action, **arguments)
    assert (error.code, error.details.get("field")) == (code, field)
    assert stored(world) == before


def test_a_guest_reads_the_set_but_cannot_change_it(world: dict[str, Any]) -> None:
    assert act(world, "labels", who="carol")["labels"]
    assert refused(world, "label_add", who="carol", label="Mine", color="red").code == "forbidden"


def test_the_servers_palette_and_set_size_are_the_board_pages_own() -> None:
    """board-labels.js LABEL_COLOURS (the colours the page draws) in the same order, and
    the set's cap it keeps."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node")
    module = Path(settings.BASE_DIR) / "bridge_js" / "plugins" / "board" / "board-labels.js"
    script = (
        f"import {{ LABEL_COLOURS }} from {json.dumps(module.as_uri())};"
        "console.log(JSON.stringify(LABEL_COLOURS));"
    )
    out = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == list(COLOURS)
    assert f"const MAX_SET = {MAX_SET};" in module.read_text(encoding="utf-8")
