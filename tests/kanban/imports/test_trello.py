"""Importing a Trello board export: alice brings her team's board in from Trello. Lists,
cards, labels, people, checklists, comments with their original authors and dates,
attachments as links, custom fields and plugin data arrive; what the Board page does not
show yet is kept beside it; a dry run says all of it and writes nothing; importing again
updates the board it made; bad input is refused whole, leaving nothing behind."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from django.conf import settings
from django.test import override_settings

from kanban.access.memberships import membership_set
from kanban.data.board import layout
from kanban.data.board.comments import MAX_COMMENTS, normalize_comments
from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from kanban.data.target import Target
from kanban.imports.trello import TrelloReport, trello_import
from kanban.models import Project, Role
from storage import engine
from storage.errors import ErrorCode, KanbanError
from storage.kv import kv_project_bytes
from storage.namespaces import trello_import_marker
from tests.factories import users
from tests.kanban.imports.trello_export import TrelloExport, trello_id
from tests.kanban.management.test_commands import manage

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(db: None) -> dict[str, Any]:
    return {user.username: user for user in users("alice", "bob", "carol")}


class Team:
    """The team's Trello board: bob is a user here, dana is not, erin left the board
    (only her comment remembers her)."""

    def __init__(self) -> None:
        self.export = export = TrelloExport(name="Launch plan 🚀")
        self.bob = export.member("bob", "Bob Okafor")
        self.dana = export.member("dana_t", "Dana Ünal")
        self.erin = trello_id()
        self.todo = export.trello_list("To do")
        self.doing = export.trello_list("Doing")
        self.old = export.trello_list("Old ideas", closed=True)
        self.urgent = export.label("Urgent", "red")
        self.unnamed = export.label("", "green")
        self.budget = export.custom_field("Budget", "number")
        # The second card in the export comes first in its list (pos).
        self.later = self.export.card(self.todo, "Write the press release", pos=90000)
        self.first = self.export.card(
            self.todo,
            "Book the venue ☕",
            pos=100,
            desc="Ask for the big room — größer ist besser",
            due="2024-05-01T23:30:00.000-02:00",
            start="2024-04-20T08:00:00.000Z",
            dueComplete=True,
            idLabels=[self.urgent, self.unnamed],
            idMembers=[self.bob, self.dana],
            attachments=[
                {"id": trello_id(), "name": "floor plan.pdf", "url": "https://x.test/plan.pdf"}
            ],
            customFieldItems=[
                {"id": trello_id(), "idCustomField": self.budget, "value": {"number": "1200"}}
            ],
            pluginData=[{"id": trello_id(), "idPlugin": "p1", "value": '{"votes":3}'}],
        )
        self.moved = self.export.card(self.doing, "Print the badges")
        export.moved(self.moved, from_list=self.todo)
        self.archived = self.export.card(self.doing, "Old flyer", closed=True)
        self.idea = self.export.card(self.old, "A blimp")
        export.checklist(
            self.first,
            "Before",
            [
                {"name": "Call them", "state": "complete", "pos": 2},
                {"name": "Find a date", "pos": 1, "due": "2024-04-25T00:00:00.000Z"},
            ],
        )
        export.checklist(self.first, "After", [{"name": "Pay 💶", "idMember": self.bob}])
        self.hello = export.comment(
            self.first, "Booked! 🎉", by=self.bob, at="2024-04-21T10:00:00.000Z"
        )
        self.older = export.comment(
            self.first, "Which room?", by=self.dana, at="2024-04-20T09:00:00.000Z"
        )
        self.gone = export.comment(
            self.first,
            "I'm off the team, good luck",
            by=self.erin,
            at="2024-04-22T10:00:00.000Z",
            creator={"id": self.erin, "username": "erin", "fullName": "Erin Left"},
        )
        export.board["pluginData"].append({"id": trello_id(), "idPlugin": "p2", "value": "{}"})

    def data(self) -> bytes:
        return self.export.data()


def value(user: Any, project_id: UUID | None, key: str) -> Any:
    assert project_id is not None
    entry = project_kv_get(target=Target(user=user, project_id=project_id), key=key)
    return None if entry is None else entry.value


def test_a_trello_board_becomes_a_board_alice_owns_with_everything_her_team_would_miss(
    people: dict[str, Any],
) -> None:
    alice, team = people["alice"], Team()

    report = trello_import(actor=alice, data=team.data())

    assert report.created and not report.dry_run and report.project_id is not None
    project = Project.objects.get(pk=report.project_id)
    assert project.name == "Launch plan 🚀"
    assert project.memberships.get(role=Role.OWNER).user == alice
    columns = value(alice, project.id, "board:columns")
    assert [column["title"] for column in columns] == ["To do", "Doing"]
    index = value(alice, project.id, "board:cards")
    cards = {card_id: value(alice, project.id, f"card:{card_id}") for card_id in index}
    to_do = sorted(
        (card for card in cards.values() if card["column"] == team.todo and not card["archived"]),
        key=lambda card: card["rank"],
    )
    assert [card["title"] for card in to_do] == ["Book the venue ☕", "Write the press release"]

    first = cards[team.first]
    assert layout.normalize_card(team.first, first) == {
        "id": team.first,
        "title": "Book the venue ☕",
        "description": "Ask for the big room — größer ist besser",
        "assignees": ["bob", "Dana Ünal (Trello)"],
        "labels": ["Urgent", "green"],
        "start": "2024-04-20",  # the day of the start Trello kept, as the page shows it
        "due": "2024-05-02",
        "column": team.todo,
        "rank": first["rank"],
        "item": None,
        "archived": False,
        "checklist": [
            {"id": first["checklist"][0]["id"], "text": "Find a date", "done": False},
            {"id": first["checklist"][1]["id"], "text": "Call them", "done": True},
            {"id": first["checklist"][2]["id"], "text": "Pay 💶", "done": False},
        ],
        "commentCount": 3,
    }
    kept = first["trello"]
    assert kept["start"] == "2024-04-20T08:00:00.000Z" and kept["dueComplete"] is True
    assert {"name": "Urgent", "color": "red"} in kept["labels"]
    assert kept["attachments"][0]["name"] == "floor plan.pdf"
    assert kept["attachments"][0]["url"] == "https://x.test/plan.pdf"
    assert kept["customFields"] == [{"field": "Budget", "type": "number", "value": "1200"}]
    assert [c["name"] for c in kept["checklists"]] == ["Before", "After"]
    assert kept["checklists"][0]["items"][0]["due"] == "2024-04-25T00:00:00.000Z"
    assert kept["checklists"][1]["items"][0]["member"] == team.bob

    comments = value(alice, project.id, f"comments:{team.first}")
    assert normalize_comments(comments) == comments
    assert [(c["author"], c["text"], c["at"]) for c in comments] == [
        ("Dana Ünal (Trello)", "Which room?", "2024-04-20T09:00:00.000Z"),
        ("bob", "Booked! 🎉", "2024-04-21T10:00:00.000Z"),
        ("Erin Left (Trello)", "I'm off the team, good luck", "2024-04-22T10:00:00.000Z"),
    ]
    # The card moved in Trello is in the list it was moved to; closed cards and the cards
    # of a closed list are archived, out of every column.
    assert cards[team.moved]["column"] == team.doing
    assert cards[team.archived]["archived"] and cards[team.idea]["archived"]
    assert [item["closed"] for item in value(alice, project.id, "trello:lists")] == [
        False,
        False,
        True,
    ]
    assert len(value(alice, project.id, "trello:pluginData")) == 2
    assert value(alice, project.id, "trello:board")["prefs"]["background"] == "blue"
    assert value(alice, project.id, "trello:members")[0]["memberType"] == "normal"

    assert report.counts["cards"] == 5 and report.counts["cards archived"] == 2
    assert report.counts["lists"] == 2 and report.counts["lists archived"] == 1
    assert report.counts["comments"] == 3 and report.counts["checklist items"] == 3
    assert report.counts["members mapped"] == 1 and report.counts["members kept by name"] == 1
    assert report.counts["attachments (links)"] == 1
    assert {
        "what": "member",
        "id": team.dana,
        "why": "'dana_t' is no user here (map it to one): kept by name",
    } in report.skipped
    assert any(item["what"] == "list" and item["id"] == team.old for item in report.skipped)
    assert {item["what"] for item in report.kept} >= {
        "attachments",
        "start dates",
        "pluginData",
        "custom fields",
    }
    stored = engine.get_last_write(engine_address(project.id, f"card:{team.first}"))
    assert stored is not None and stored.source is not None
    assert stored.source["via"] == "import" and stored.source["import"] == "trello"


def engine_address(project_id: UUID, key: str) -> Any:
    from storage.namespaces import project_kv

    return project_kv(project_id, key)


def test_a_dry_run_reports_the_same_and_writes_nothing(people: dict[str, Any]) -> None:
    alice, team = people["alice"], Team()

    dry = trello_import(actor=alice, data=team.data(), dry_run=True)

    assert dry.dry_run and dry.created and dry.project_id is None
    assert not Project.objects.exists()
    assert engine.get_value(trello_import_marker(team.export.board_id)) is None
    real = trello_import(actor=alice, data=team.data())
    assert real.counts == dry.counts and real.skipped == dry.skipped


def test_importing_again_updates_the_board_it_made_and_keeps_what_was_added_here(
    people: dict[str, Any],
) -> None:
    alice, bob, team = people["alice"], people["bob"], Team()
    first = trello_import(actor=alice, data=team.data())
    project_id = first.project_id
    assert project_id is not None
    project = Project.objects.get(pk=project_id)
    membership_set(user=bob, project=project, role=Role.DEVELOPER)
    # bob comments on the imported card from the Board page, beside Trello's comments.
    page = Provenance(via="bridge", page=f"/boards/{project_id}/")
    key = f"comments:{team.first}"
    mine = {
        "id": "bob-1",
        "author": "bob",
        "text": "Venue confirmed",
        "at": "2024-06-01T00:00:00.000Z",
        "edited": None,
    }
    project_kv_set(
        target=Target(user=bob, project_id=project_id),
        key=key,
        value=[*value(bob, project_id, key), mine],
        provenance=page,
    )
    index = value(alice, project_id, "board:cards")
    project_kv_set(
        target=Target(user=alice, project_id=project_id),
        key="card:local1",
        value={"id": "local1", "title": "Made here", "column": team.todo},
        provenance=page,
    )
    project_kv_set(
        target=Target(user=alice, project_id=project_id),
        key="board:cards",
        value=[*index, "local1"],
        provenance=page,
    )
    # Meanwhile in Trello: a card renamed, one deleted, one added, a comment deleted.
    cards = team.export.board["cards"]
    next(c for c in cards if c["id"] == team.later)["name"] = "Write the press release v2"
    team.export.board["cards"] = [c for c in cards if c["id"] != team.archived]
    added = team.export.card(team.doing, "Order the catering")
    team.export.board["actions"] = [
        a for a in team.export.board["actions"] if a["id"] != team.older
    ]

    again = trello_import(actor=alice, data=team.data())

    assert again.project_id == project_id and not again.created
    assert Project.objects.count() == 1
    index = value(alice, project_id, "board:cards")
    assert team.archived not in index and value(alice, project_id, f"card:{team.archived}") is None
    assert added in index and "local1" in index
    assert value(alice, project_id, f"card:{team.later}")["title"] == "Write the press release v2"
    comments = value(alice, project_id, key)
    assert [c["id"] for c in comments] == [team.hello, team.gone, "bob-1"]
    assert value(alice, project_id, f"card:{team.first}")["commentCount"] == 3
    assert again.counts["cards removed (gone from Trello)"] == 1


def test_only_an_owner_of_the_board_an_import_made_imports_into_it(
    people: dict[str, Any],
) -> None:
    alice, bob, team = people["alice"], people["bob"], Team()
    report = trello_import(actor=alice, data=team.data())
    assert report.project_id is not None
    membership_set(user=bob, project=Project.objects.get(pk=report.project_id), role=Role.DEVELOPER)
    before = value(alice, report.project_id, "board:cards")

    with pytest.raises(KanbanError) as refused:
        trello_import(actor=bob, data=team.data())

    assert refused.value.code == ErrorCode.FORBIDDEN
    assert value(alice, report.project_id, "board:cards") == before
    assert Project.objects.count() == 1


def test_members_are_mapped_by_id_or_trello_username(people: dict[str, Any]) -> None:
    alice, team = people["alice"], Team()

    report = trello_import(
        actor=alice, data=team.data(), mapping={"dana_t": "carol", team.erin: "alice"}
    )

    card = value(alice, report.project_id, f"card:{team.first}")
    assert card["assignees"] == ["bob", "carol"]
    comments = value(alice, report.project_id, f"comments:{team.first}")
    assert [c["author"] for c in comments] == ["carol", "bob", "alice"]
    assert report.counts["members mapped"] == 3


def test_a_mapping_to_nobody_is_refused(people: dict[str, Any]) -> None:
    with pytest.raises(KanbanError) as refused:
        trello_import(actor=people["alice"], data=Team().data(), mapping={"dana_t": "zoe"})
    assert refused.value.code == ErrorCode.INVALID_ARGUMENT and "'zoe'" in refused.value.message
    assert not Project.objects.exists()


def test_comments_past_the_boards_cap_are_reported_oldest_first(people: dict[str, Any]) -> None:
    alice, export = people["alice"], TrelloExport()
    bob = export.member("bob", "Bob")
    card = export.card(export.trello_list("To do"), "Busy card")
    ids = [
        export.comment(card, f"note {n}", by=bob, at=f"2024-01-01T00:{n // 60:02d}:{n % 60:02d}Z")
        for n in range(MAX_COMMENTS + 5)
    ]

    report = trello_import(actor=alice, data=export.data())

    comments = value(alice, report.project_id, f"comments:{card}")
    assert [c["id"] for c in comments] == ids[5:]
    skipped = [item["id"] for item in report.skipped if item["what"] == "comment"]
    assert skipped == ids[:5]


def test_progress_is_heard_to_the_end(people: dict[str, Any]) -> None:
    heard: list[tuple[int, int]] = []

    trello_import(
        actor=people["alice"], data=Team().data(), progress=lambda d, t: heard.append((d, t))
    )

    assert heard[0] == (0, 6) and heard[-1] == (6, 6)
    assert [done for done, _ in heard] == sorted(done for done, _ in heard)


def _card_in_missing_list() -> bytes:
    export = TrelloExport()
    export.card(trello_id(), "Lost card")
    return export.data()


def _duplicate_card() -> bytes:
    export = TrelloExport()
    export.card(export.trello_list("To do"), "Twice")
    export.board["cards"].append(dict(export.board["cards"][0]))
    return export.data()


def _nested(depth: int) -> bytes:
    export = TrelloExport()
    export.board["pluginData"] = [{"id": trello_id(), "value": None}]
    board = export.data()
    return board.replace(b'"value": null', b'"value": ' + b"[" * depth + b"]" * depth)


BAD = {
    "not JSON": (b"<html>not an export</html>", ErrorCode.INVALID_ARGUMENT, "not JSON"),
    "not UTF-8": (b'{"name": "\xff"}', ErrorCode.INVALID_ARGUMENT, "not UTF-8"),
    "another shape": (b'[{"id": "1"}]', ErrorCode.INVALID_ARGUMENT, "one JSON object"),
    "no lists": (b'{"id": "abc", "name": "x", "cards": []}', ErrorCode.INVALID_ARGUMENT, "lists"),
    "missing list": (_card_in_missing_list(), ErrorCode.INVALID_ARGUMENT, "does not hold"),
    "duplicate ids": (_duplicate_card(), ErrorCode.INVALID_ARGUMENT, "twice"),
    "past the depth": (_nested(70), ErrorCode.INVALID_ARGUMENT, "nested deeper"),
    "past the stack": (_nested(200_000), ErrorCode.INVALID_ARGUMENT, "nested deeper"),
    "bad id": (
        TrelloExport().data().replace(b'"lists": []', b'"lists": [{"id": "../x", "name": "a"}]'),
        ErrorCode.INVALID_ARGUMENT,
        "no id",
    ),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_input_is_refused_with_a_clear_message_and_nothing_written(
    people: dict[str, Any], case: str
) -> None:
    data, code, words = BAD[case]

    with pytest.raises(KanbanError) as refused:
        trello_import(actor=people["alice"], data=data)

    assert refused.value.code == code and words in refused.value.message
    assert not Project.objects.exists()


@override_settings(KANBAN_TRELLO_IMPORT_BYTES=1000)
def test_a_file_past_the_import_limit_is_refused_unread(people: dict[str, Any]) -> None:
    with pytest.raises(KanbanError) as refused:
        trello_import(actor=people["alice"], data=b" " * 1001)
    assert refused.value.code == ErrorCode.TOO_LARGE and "at most 1000" in refused.value.message
    assert not Project.objects.exists()


@override_settings(KANBAN_PROJECT_BYTES=20_000)
def test_a_board_past_the_storage_quota_is_refused_whole(people: dict[str, Any]) -> None:
    export = TrelloExport()
    todo = export.trello_list("To do")
    for n in range(100):
        export.card(todo, f"Card {n}", desc="x" * 300)

    with pytest.raises(KanbanError) as refused:
        trello_import(actor=people["alice"], data=export.data())

    assert refused.value.code == ErrorCode.TOO_LARGE
    assert not Project.objects.exists()
    assert engine.get_value(trello_import_marker(export.board_id)) is None


def test_the_command_prints_the_report_and_a_dry_run_writes_nothing(
    people: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "board.json"
    path.write_bytes(Team().data())

    assert manage("import_trello", str(path), "--owner", "alice", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "Dry run" in out and "5 cards" in out and not Project.objects.exists()

    assert manage("import_trello", str(path), "--owner", "alice", "--map", "dana_t=carol") == 0
    out = capsys.readouterr().out
    assert "Imported" in out and Project.objects.count() == 1
    assert "attachments" in out


def test_the_command_refuses_a_bad_file(
    people: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "board.json"
    path.write_text(json.dumps({"cards": []}))

    assert manage("import_trello", str(path), "--owner", "alice") == 1
    assert "not a Trello board export" in capsys.readouterr().err
    assert not Project.objects.exists()


def test_a_report_reads_as_json(people: dict[str, Any]) -> None:
    report = trello_import(actor=people["alice"], data=Team().data(), dry_run=True)
    assert isinstance(report, TrelloReport)
    assert json.loads(json.dumps(report.as_dict()))["counts"]["cards"] == 5


def test_two_imports_of_one_export_at_once_make_one_board(people: dict[str, Any]) -> None:
    alice, team = people["alice"], Team()
    inner: list[TrelloReport] = []

    def meanwhile(done: int, total: int) -> None:
        # The other import runs to its end between this one's look for the board it made
        # and its commit.
        if not inner:
            inner.append(trello_import(actor=alice, data=team.data()))

    with pytest.raises(KanbanError) as refused:
        trello_import(actor=alice, data=team.data(), progress=meanwhile)

    assert refused.value.code == ErrorCode.CONFLICT
    assert "imported meanwhile" in refused.value.message
    assert list(Project.objects.values_list("id", flat=True)) == [inner[0].project_id]


def test_a_board_changed_during_its_import_again_stops_the_import(
    people: dict[str, Any],
) -> None:
    alice, team = people["alice"], Team()
    first = trello_import(actor=alice, data=team.data())
    assert first.project_id is not None
    project_id = first.project_id
    page = Provenance(via="bridge", page=f"/boards/{project_id}/")
    card = value(alice, project_id, f"card:{team.later}")

    def meanwhile(done: int, total: int) -> None:
        if done == total - 1:  # every card mapped, the board read: alice edits a card
            project_kv_set(
                target=Target(user=alice, project_id=project_id),
                key=f"card:{team.later}",
                value={**card, "title": "Edited meanwhile"},
                provenance=page,
            )

    with pytest.raises(KanbanError) as refused:
        trello_import(actor=alice, data=team.data(), progress=meanwhile)

    assert refused.value.code == ErrorCode.CONFLICT
    assert value(alice, project_id, f"card:{team.later}")["title"] == "Edited meanwhile"


def test_the_board_page_shows_the_imported_board_as_it_is_stored(people: dict[str, Any]) -> None:
    """The page's own readers (board-core.js, board-comments.js) drop or cut nothing the
    import wrote: every card, column and comment renders as stored."""
    alice, team = people["alice"], Team()
    report = trello_import(actor=alice, data=team.data())
    columns = value(alice, report.project_id, "board:columns")
    index = value(alice, report.project_id, "board:cards")
    cards = {card_id: value(alice, report.project_id, f"card:{card_id}") for card_id in index}
    comments = value(alice, report.project_id, f"comments:{team.first}")
    page = Path(settings.BASE_DIR) / "bridge_js" / "plugins" / "board"
    script = (
        f"import {{ normalizeCard, normalizeColumns }} from "
        f"{json.dumps((page / 'board-core.js').as_uri())};"
        f"import {{ normalizeComments }} from "
        f"{json.dumps((page / 'board-comments.js').as_uri())};"
        f"const cards = {json.dumps(cards)};"
        "console.log(JSON.stringify({"
        f"columns: normalizeColumns({json.dumps(columns)}),"
        "cards: Object.fromEntries(Object.entries(cards).map(([id, c]) => "
        "[id, normalizeCard(id, c)])),"
        f"comments: normalizeComments({json.dumps(comments)})}}));"
    )
    node = shutil.which("node")
    assert node is not None, "the Board page's modules run on node"
    out = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True
    )
    shown = json.loads(out.stdout)

    assert shown["columns"] == columns
    assert shown["comments"] == comments
    for card_id, card in cards.items():
        page_card = shown["cards"][card_id]
        for name in ("title", "description", "labels", "due", "column", "rank", "archived"):
            assert page_card[name] == card[name], (card_id, name)
        assert page_card["assignees"] == card["assignees"]
        assert page_card["checklist"] == card["checklist"]
        assert page_card["commentCount"] == card["commentCount"]


def test_the_quota_is_counted_as_storage_counts_it_kept_versions_included(
    people: dict[str, Any],
) -> None:
    """A board that fits the quota once but not with its kept versions is refused as too
    large before the commit, not found out by it."""
    alice = people["alice"]
    report = trello_import(actor=alice, data=Team().data())
    assert report.project_id is not None
    used = kv_project_bytes(project_id=report.project_id)
    other = Team()

    with override_settings(KANBAN_PROJECT_BYTES=used - 1), pytest.raises(KanbanError) as refused:
        trello_import(actor=alice, data=other.data())

    assert refused.value.code == ErrorCode.TOO_LARGE
    assert "KANBAN_PROJECT_BYTES" in refused.value.message
    assert Project.objects.count() == 1


def test_a_checklist_item_longer_than_the_board_shows_is_cut_and_reported(
    people: dict[str, Any],
) -> None:
    export = TrelloExport()
    card = export.card(export.trello_list("To do"), "Long steps")
    export.checklist(card, "Steps", [{"name": "é" * 250}])

    report = trello_import(actor=people["alice"], data=export.data())

    stored = value(people["alice"], report.project_id, f"card:{card}")
    assert stored["checklist"][0]["text"] == "é" * layout.MAX_TEXT
    assert stored["trello"]["checklists"][0]["items"][0]["name"] == "é" * 250
    [cut] = [item for item in report.skipped if item["what"] == "checklist item text"]
    assert "cut" in cut["why"]
