"""A board moves: alice exports the demo Board (comments, checklists and a knowledge
document added), and dave imports the archive on a deployment of his own. He gets the same
board field for field; importing it again brings an edited card back to the archive's; bob,
who has an account there, is offered the board rather than added; a bad archive is refused
whole, writing nothing. The cards also come out as CSV for a spreadsheet."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path
from typing import Any
from uuid import UUID

import jsonschema
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import override_settings

from kanban.data import demo
from kanban.data.board import layout
from kanban.imports.board_archive import board_archive_import
from kanban.imports.board_archive_format import archive_pack
from kanban.imports.board_export import board_cards_csv, board_export
from kanban.models import Membership, MembershipOffer, Project, Role
from storage import engine
from storage.errors import ErrorCode, KanbanError
from storage.knowledge import knowledge_create, knowledge_list
from storage.namespaces import dataset_prefix, demo_marker, project_kv
from storage.writes import set_value
from tests.kanban.management.test_commands import manage

pytestmark = pytest.mark.django_db

COMMENTS = [
    {"id": "k1", "author": "bob", "text": "Bolts ordered", "at": "2026-03-01T09:30:00Z"},
    {"id": "k2", "author": "carol", "text": "=SUM(A1:A9)", "at": "2026-03-02T10:00:00Z"},
]
CHECKLIST = [
    {"id": "i1", "text": "Ask for a quote", "done": True},
    {"id": "i2", "text": "Pay", "done": False},
]


@pytest.fixture
def demo_board() -> Project:
    """The demo Board, with comments (bob's and carol's, dated), a checklist and a
    knowledge document."""
    demo.demo_load()
    marker = engine.get_value(demo_marker())
    assert marker is not None
    board = Project.objects.get(pk=marker.value["boardId"])
    card = engine.get_value(project_kv(board.id, "card:c2"))
    assert card is not None
    engine.commit(
        [
            set_value(project_kv(board.id, "card:c2"), {**card.value, "checklist": CHECKLIST}),
            set_value(project_kv(board.id, "comments:c2"), COMMENTS),
        ]
    )
    knowledge_create(
        project_id=board.id, title="Suppliers", markdown="# Bolts\nAcme\n", source={"via": "cli"}
    )
    return board


def values_of(project_id: UUID, domain: str = "kv") -> dict[str, Any]:
    return {
        stored.address.key: stored.value
        for stored in engine.scan_values(dataset_prefix(project_id, domain))
    }


def a_fresh_deployment() -> Any:
    """Nobody but dave and bob: the demo's projects and people are gone, storage too."""
    for project in Project.objects.all():
        engine.erase_namespaces(f"project.{project.id}.")
    Project.objects.all().delete()
    get_user_model().objects.exclude(username="bob").delete()
    return get_user_model().objects.create_user("dave")


def test_the_board_comes_back_field_for_field_on_a_fresh_deployment(demo_board: Project) -> None:
    alice = get_user_model().objects.get(username="alice")
    values, persistent = values_of(demo_board.id), values_of(demo_board.id, "persistentValue")
    files = {f.path: bytes(f.content) for f in demo_board.plugin_files.all()}
    archive = board_export(actor=alice, project_id=demo_board.id)

    dave = a_fresh_deployment()
    report = board_archive_import(actor=dave, data=archive)

    assert report.created and report.project_id is not None
    board = Project.objects.get(pk=report.project_id)
    assert board.name == "Board" and board.kanban_entry == demo_board.kanban_entry
    assert values_of(board.id) == values
    assert values_of(board.id)["comments:c2"] == COMMENTS  # authors and dates kept
    assert values_of(board.id)["card:c2"]["checklist"] == CHECKLIST
    assert values_of(board.id, "persistentValue") == persistent
    assert [doc.title for doc in knowledge_list(project_id=board.id).documents] == ["Suppliers"]
    assert {f.path: bytes(f.content) for f in board.plugin_files.all()} == files
    assert json.loads(board.package_json)["steamHarness"]["projectInfo"]["projectId"] == str(
        board.id
    )
    assert report.counts["cards"] == 5 and report.counts["comments"] == 2
    # dave owns it; bob is offered his developer role, carol has no account here.
    assert Membership.objects.get(project=board).user == dave
    offer = MembershipOffer.objects.get(project=board)
    assert (offer.user.username, offer.role) == ("bob", Role.DEVELOPER)
    assert report.offered == ["bob"] and report.not_here == ["alice", "carol"]


def test_a_second_import_updates_the_board_it_made(demo_board: Project) -> None:
    alice = get_user_model().objects.get(username="alice")
    archive = board_export(actor=alice, project_id=demo_board.id)
    dave = get_user_model().objects.create_user("dave")
    first = board_archive_import(actor=dave, data=archive)
    assert first.project_id is not None
    key = project_kv(first.project_id, "card:c1")
    edited = engine.get_value(key)
    assert edited is not None
    engine.commit([set_value(key, {**edited.value, "title": "Renamed here"})])
    index = engine.get_value(project_kv(first.project_id, layout.INDEX_KEY))
    assert index is not None
    engine.commit(
        [
            set_value(project_kv(first.project_id, "card:new"), {"id": "new", "title": "Mine"}),
            set_value(project_kv(first.project_id, layout.INDEX_KEY), [*index.value, "new"]),
        ]
    )

    second = board_archive_import(actor=dave, data=archive)

    assert second.project_id == first.project_id and not second.created
    assert Project.objects.filter(name="Board").count() == 2  # alice's and dave's, no third
    after = values_of(first.project_id)
    assert after["card:c1"]["title"] == "Write the onboarding guide"
    assert after[layout.INDEX_KEY] == ["c1", "c2", "c3", "c4", "c5", "new"]
    assert after["card:new"]["title"] == "Mine"


def test_only_an_owner_of_the_imported_board_imports_it_again(demo_board: Project) -> None:
    alice = get_user_model().objects.get(username="alice")
    archive = board_export(actor=alice, project_id=demo_board.id)
    dave, erin = (
        get_user_model().objects.create_user("dave"),
        get_user_model().objects.create_user("erin"),
    )
    board_archive_import(actor=dave, data=archive)
    with pytest.raises(KanbanError) as refused:
        board_archive_import(actor=erin, data=archive)
    assert refused.value.code == ErrorCode.FORBIDDEN


def test_a_dry_run_reports_and_writes_nothing(demo_board: Project) -> None:
    alice = get_user_model().objects.get(username="alice")
    archive = board_export(actor=alice, project_id=demo_board.id)
    projects = Project.objects.count()
    report = board_archive_import(actor=alice, data=archive, dry_run=True)
    assert report.dry_run and report.project_id is None and report.counts["cards"] == 5
    assert Project.objects.count() == projects


def test_a_guest_may_not_export(demo_board: Project) -> None:
    carol = get_user_model().objects.get(username="carol")
    with pytest.raises(KanbanError) as refused:
        board_export(actor=carol, project_id=demo_board.id)
    assert refused.value.code == ErrorCode.FORBIDDEN


def test_history_comes_along_when_asked(demo_board: Project) -> None:
    alice = get_user_model().objects.get(username="alice")
    archive = board_export(actor=alice, project_id=demo_board.id, history=True)
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        board = json.loads(zf.read("board.json"))
    cards = {entry["key"]: entry for entry in board["values"]["kv"]}
    assert board["history"] is True
    assert cards["card:c1"]["history"][0]["value"]["title"] == "Write the onboarding guide"


def rewritten(archive: bytes, change: Any) -> bytes:
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        board = json.loads(zf.read("board.json"))
        files = {
            name[len("files/") :]: zf.read(name)
            for name in zf.namelist()
            if name.startswith("files/")
        }
    change(board)
    return archive_pack(board=board, files=files)


def damaged(archive: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as zf, zipfile.ZipFile(out, "w") as copy:
        for name in zf.namelist():
            data = zf.read(name)
            copy.writestr(name, data.replace(b"Order M6 bolts", b"Order M8 bolts"))
    return out.getvalue()


@pytest.mark.parametrize(
    ("spoil", "says"),
    [
        (lambda archive: b"{}", "not a zip"),
        (damaged, "checksum"),
        (lambda archive: rewritten(archive, lambda b: b.update(version=3)), "version"),
        (lambda archive: rewritten(archive, lambda b: b.pop("members")), "members"),
        (lambda archive: rewritten(archive, lambda b: b["board"].pop("id")), "UUID"),
    ],
    ids=["not a zip", "checksum off", "another version", "no members", "no board id"],
)
def test_bad_archives_are_refused_writing_nothing(
    demo_board: Project, spoil: Any, says: str
) -> None:
    alice = get_user_model().objects.get(username="alice")
    archive = spoil(board_export(actor=alice, project_id=demo_board.id))
    projects = Project.objects.count()
    with pytest.raises(KanbanError) as refused:
        board_archive_import(actor=alice, data=archive)
    assert refused.value.code == ErrorCode.INVALID_ARGUMENT
    assert says in refused.value.message
    assert Project.objects.count() == projects


def test_the_cards_as_csv_guard_against_formulas(demo_board: Project) -> None:
    alice = get_user_model().objects.get(username="alice")
    key = project_kv(demo_board.id, "card:c5")
    card = engine.get_value(key)
    assert card is not None
    engine.commit([set_value(key, {**card.value, "title": "=HYPERLINK(1)", "archived": True})])

    rows = list(csv.reader(io.StringIO(board_cards_csv(actor=alice, project_id=demo_board.id))))

    assert rows[0][:3] == ["column", "title", "description"]
    assert [row[1] for row in rows[1:]] == [
        "Write the onboarding guide",
        "Order M6 bolts",
        "Fix the login redirect",
        "Assemble shelf prototype",
        "'=HYPERLINK(1)",
    ]
    bolts = rows[2]
    assert bolts[0] == "To do" and bolts[3] == "purchasing" and bolts[4] == "bob"
    assert bolts[6:9] == ["1", "2", "2"] and bolts[9] == "no"
    assert rows[5][9] == "yes"


def test_the_commands_export_and_import(demo_board: Project, tmp_path: Path) -> None:
    target = tmp_path / "board.zip"
    assert manage("export_board", str(demo_board.id), str(target), "--history") == 0
    get_user_model().objects.create_user("dave")
    assert manage("import_board", str(target), "--owner", "dave", "--dry-run") == 0
    assert Project.objects.filter(name="Board").count() == 1
    assert manage("import_board", str(target), "--owner", "dave") == 0
    assert Project.objects.filter(name="Board").count() == 2


def test_board_json_follows_the_documented_schema(demo_board: Project) -> None:
    alice = get_user_model().objects.get(username="alice")
    archive = board_export(actor=alice, project_id=demo_board.id, history=True)
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        board = json.loads(zf.read("board.json"))
    schema = json.loads((Path(settings.BASE_DIR) / "docs/board-archive.schema.json").read_text())
    jsonschema.validate(board, schema)


def test_a_board_past_the_storage_quota_is_refused_writing_nothing(demo_board: Project) -> None:
    alice = get_user_model().objects.get(username="alice")
    archive = board_export(actor=alice, project_id=demo_board.id)
    projects = Project.objects.count()
    with override_settings(KANBAN_PROJECT_BYTES=1000), pytest.raises(KanbanError) as refused:
        board_archive_import(actor=alice, data=archive)
    assert (
        refused.value.code == ErrorCode.TOO_LARGE
        and "KANBAN_PROJECT_BYTES" in refused.value.message
    )
    assert Project.objects.count() == projects
