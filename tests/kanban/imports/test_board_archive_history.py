"""An archive exported with its history keeps a card's earlier edits: dave imports alice's
demo Board (alice renamed card c2 after it was made) and c2's Activity shows the card
before the rename too, under the source that wrote it; a board an import only updates
keeps its own history."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from kanban.imports.board_archive import board_archive_import
from kanban.imports.board_export import board_export
from kanban.models import Project
from storage import engine, history
from storage.namespaces import project_kv
from tests.kanban.imports.test_board_archive import a_fresh_deployment, demo_board

__all__ = ["demo_board"]  # a fixture, used by name

pytestmark = pytest.mark.django_db


def versions(project_id: Any, key: str) -> list[history.Version]:
    return history.read_history(project_kv(project_id, key), limit=100)


def test_the_kept_versions_come_back_with_an_archive_exported_with_history(
    demo_board: Project,
) -> None:
    alice, bob = get_user_model().objects.get(username="alice"), "bob"
    card = engine.get_value(project_kv(demo_board.id, "card:c2"))
    assert card is not None
    project_kv_set(
        target=Target(user=alice, project_id=demo_board.id),
        key="card:c2",
        value={**card.value, "title": "Order M8 bolts"},
        provenance=Provenance(via="api"),
    )
    exported = versions(demo_board.id, "card:c2")
    assert len(exported) == 2 and exported[1].value["assignees"] == [bob]
    archive = board_export(actor=alice, project_id=demo_board.id, history=True)

    dave = a_fresh_deployment()
    report = board_archive_import(actor=dave, data=archive)

    assert report.project_id is not None
    kept = versions(report.project_id, "card:c2")
    assert [v.value for v in kept] == [v.value for v in exported]
    assert kept[0].value["title"] == "Order M8 bolts" and kept[1].value["title"] == "Order M6 bolts"
    replayed = kept[1].source or {}
    assert replayed["replayedBy"]["user"] == "dave"
    assert replayed["writtenAt"] == exported[1].written_at.isoformat()
    assert replayed.get("user") == (exported[1].source or {}).get("user")

    # Imported again, the board keeps its history: nothing is replayed twice.
    board_archive_import(actor=dave, data=archive)
    assert len(versions(report.project_id, "card:c2")) == len(kept) + 1


def test_without_history_each_value_is_one_version(demo_board: Project) -> None:
    alice = get_user_model().objects.get(username="alice")
    archive = board_export(actor=alice, project_id=demo_board.id)
    report = board_archive_import(actor=a_fresh_deployment(), data=archive)
    assert report.project_id is not None
    assert len(versions(report.project_id, "card:c2")) == 1
