"""Board archives over REST: bob (a developer) downloads the board's archive and its cards
as CSV, charlie (a guest) may not; dave imports the archive as a board of his own and
importing it again updates that board; a file that is no archive is refused."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from kanban.models import Project
from storage import engine
from storage.namespaces import project_kv
from storage.writes import set_value
from tests.api.conftest import People, client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def cards(board: Project) -> Project:
    engine.commit(
        [
            set_value(project_kv(board.id, "board:columns"), [{"id": "todo", "title": "To do"}]),
            set_value(project_kv(board.id, "board:cards"), ["a"]),
            set_value(
                project_kv(board.id, "card:a"),
                {"id": "a", "title": "+1 555 0100", "column": "todo", "labels": ["@ops"]},
            ),
        ]
    )
    return board


def post_archive(client: Any, data: bytes, query: str = "") -> Any:
    return client.post(
        "/api/v1/projects/archive" + query, data=data, content_type="application/zip"
    )


def test_a_developer_downloads_the_archive_and_another_person_imports_it(
    people: People, cards: Project
) -> None:
    download = client_for(people.bob).get(f"/api/v1/projects/{cards.id}/archive?history=true")
    assert download.status_code == 200
    assert download["Content-Type"] == "application/zip"
    assert "attachment" in download["Content-Disposition"]

    dave = client_for(people.dave)
    dry = post_archive(dave, download.content, "?dryRun=true")
    assert dry.status_code == 200 and dry.json()["dryRun"] and dry.json()["projectId"] is None
    first = post_archive(dave, download.content)
    assert first.status_code == 200, first.content
    report = first.json()
    assert report["created"] and report["counts"]["cards"] == 1
    assert sorted(report["offered"]) == ["alice", "bob", "charlie"]
    imported = engine.get_value(project_kv(report["projectId"], "card:a"))
    assert imported is not None and imported.value["title"] == "+1 555 0100"

    again = post_archive(dave, download.content)
    assert again.status_code == 200
    assert again.json()["projectId"] == report["projectId"] and not again.json()["created"]
    assert Project.objects.count() == 2


def test_the_cards_come_as_csv_with_formulas_guarded(people: People, cards: Project) -> None:
    response = client_for(people.bob, token=False).get(f"/api/v1/projects/{cards.id}/cards.csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8"))))
    assert rows[1][:4] == ["To do", "'+1 555 0100", "", "'@ops"]


def test_a_guest_may_not_export_and_a_stranger_finds_nothing(
    people: People, cards: Project
) -> None:
    guest = client_for(people.charlie).get(f"/api/v1/projects/{cards.id}/archive")
    assert guest.status_code == 403 and guest.json()["code"] == "forbidden"
    stranger = client_for(people.dave).get(f"/api/v1/projects/{cards.id}/cards.csv")
    assert stranger.status_code == 404


def test_a_file_that_is_no_archive_is_refused(people: People) -> None:
    response = post_archive(client_for(people.dave), b"PK\x03\x04 not really")
    assert response.status_code == 400 and response.json()["code"] == "invalid_argument"
    assert Project.objects.count() == 0
