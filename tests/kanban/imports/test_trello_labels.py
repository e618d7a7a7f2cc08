"""Label colours: an import writes the board's label set, ``board:labels``, in Trello's base
colours, so the Board shows each label as the team knew it; importing again updates it and
keeps the labels the board gained here."""

from __future__ import annotations

from typing import Any

import pytest

from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from kanban.data.target import Target
from kanban.imports.trello import trello_import
from kanban.imports.trello_labels import base_colour
from tests.factories import a_user
from tests.kanban.imports.trello_export import TrelloExport

pytestmark = pytest.mark.django_db


def label_set(user: Any, project_id: Any) -> Any:
    entry = project_kv_get(target=Target(user=user, project_id=project_id), key="board:labels")
    return None if entry is None else entry.value


def test_trellos_variants_show_as_their_base_colour() -> None:
    assert base_colour("green_dark") == "green" and base_colour("sky_light") == "sky"
    assert base_colour("black") == "black"
    assert base_colour(None) is None and base_colour("mauve") is None


def test_the_board_gets_its_label_set_in_trellos_colours() -> None:
    alice = a_user("alice")
    export = TrelloExport(name="Colours")
    todo = export.trello_list("To do")
    urgent = export.label("Urgent", "red_dark")
    unnamed = export.label("", "lime_light")
    plain = export.label("Someday", None)
    export.label("urgent", "blue")  # the same name twice: the first colour wins
    export.card(todo, "Fix the lift", idLabels=[urgent, unnamed, plain])

    report = trello_import(actor=alice, data=export.data())

    assert label_set(alice, report.project_id) == [
        {"name": "Urgent", "color": "red"},
        {"name": "lime_light", "color": "lime"},
    ]
    assert report.counts["label colours"] == 2


def test_importing_again_updates_the_set_and_keeps_labels_added_here() -> None:
    alice = a_user("alice")
    export = TrelloExport(name="Colours")
    todo = export.trello_list("To do")
    urgent = export.label("Urgent", "red")
    export.label("Later", "sky")
    export.card(todo, "Fix the lift", idLabels=[urgent])
    project_id = trello_import(actor=alice, data=export.data()).project_id
    assert project_id is not None
    project_kv_set(
        target=Target(user=alice, project_id=project_id),
        key="board:labels",
        value=[*label_set(alice, project_id), {"name": "Ours", "color": "purple"}],
        provenance=Provenance(via="api"),
    )

    export.board["labels"][0]["color"] = "orange"
    del export.board["labels"][1]
    trello_import(actor=alice, data=export.data())

    assert label_set(alice, project_id) == [
        {"name": "Urgent", "color": "orange"},
        {"name": "Ours", "color": "purple"},
    ]
