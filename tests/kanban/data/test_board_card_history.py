"""An agent reads a card's kept versions, as the Board's Activity does, and brings one back
through compare-and-set like the card dialog's restore: over the revision it read, so a
change someone made since is never overwritten unseen. alice owns the demo Board, bob
develops on it; the agent acts as bob."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from kanban.data.board.cards import board_action
from kanban.data.demo import demo_load
from kanban.data.kv import Provenance, project_kv_get
from kanban.data.target import Target
from kanban.models import Project
from storage.errors import KanbanError

AGENT = Provenance(via="mcp", token="kb_agent00", agent="triage-bot")


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


def test_history_lists_a_cards_versions_newest_first_with_who_wrote_each(
    demo: dict[str, Any],
) -> None:
    card = act(demo, "add", title="Draft", column="todo", labels=["ops"])
    renamed = act(demo, "update", id=card["id"], title="Final", revision=card["revision"])
    history = act(demo, "history", id=card["id"])
    assert [v["revision"] for v in history["versions"]] == [renamed["revision"], card["revision"]]
    newest, oldest = history["versions"]
    assert (newest["card"]["title"], oldest["card"]["title"]) == ("Final", "Draft")
    assert (newest["who"], newest["via"], newest["agent"]) == ("bob", "mcp", "triage-bot")
    assert newest["at"] and history["cursor"] is None
    paged = act(demo, "history", id=card["id"], limit=1)
    assert len(paged["versions"]) == 1 and paged["cursor"] == renamed["revision"]
    older = act(demo, "history", id=card["id"], limit=1, cursor=paged["cursor"])
    assert [v["revision"] for v in older["versions"]] == [card["revision"]]


def test_restore_version_brings_a_version_back_over_the_revision_read(
    demo: dict[str, Any],
) -> None:
    card = act(demo, "add", title="Draft", column="todo", labels=["ops"], due="2027-01-31")
    changed = act(
        demo,
        "update",
        id=card["id"],
        revision=card["revision"],
        title="Wrong",
        labels=[],
        due=None,
    )
    moved = act(demo, "move", id=card["id"], column="doing")
    restored = act(
        demo, "restore_version", id=card["id"], version=card["revision"], revision=moved["revision"]
    )
    assert (restored["title"], restored["labels"], restored["due"], restored["column"]) == (
        "Draft",
        ["ops"],
        "2027-01-31",
        "todo",
    )
    assert restored["revision"] not in (card["revision"], changed["revision"])
    entry = project_kv_get(
        target=Target(user=demo["alice"], project_id=demo["board"].id), key=f"card:{card['id']}"
    )
    assert entry is not None and entry.source is not None
    assert entry.source["restoredFrom"] == card["revision"]


def test_a_restore_over_a_stale_revision_is_a_conflict_and_writes_nothing(
    demo: dict[str, Any],
) -> None:
    card = act(demo, "add", title="Draft", column="todo")
    changed = act(demo, "update", id=card["id"], revision=card["revision"], title="Meanwhile")
    with pytest.raises(KanbanError) as refused:
        act(
            demo,
            "restore_version",
            id=card["id"],
            version=card["revision"],
            revision=card["revision"],
        )
    assert refused.value.code == "conflict"
    assert refused.value.details["current"]["revision"] == changed["revision"]
    assert act(demo, "get", id=card["id"])["title"] == "Meanwhile"
    with pytest.raises(KanbanError) as unknown:
        act(
            demo,
            "restore_version",
            id=card["id"],
            version="not-a-version",
            revision=changed["revision"],
        )
    assert (unknown.value.code, unknown.value.details["field"]) == ("not_found", "version")
