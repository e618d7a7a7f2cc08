"""Due-date reminders: bob's card due tomorrow reminds him (one mail, through the worker to a
real SMTP server) and carol's overdue one reminds her in her daily digest; a second run sends
nothing new, a card done, archived or assigned to nobody reminds nobody, and a due date moved
later reminds again. Nobody sent them: they come from the product."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from django.core.management import call_command

from kanban.access.memberships import membership_set
from kanban.accounts.email_notifications import digests_send, email_settings_set
from kanban.data.board.reminders import due_reminders_send
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.notifications import notifications_list
from kanban.data.target import Target
from kanban.models import OutgoingEmail, Role
from kanban.projects.board_templates import board_create
from tests.factories import a_user
from tests.kanban.jobs.conftest import run_worker, smtp
from tests.kanban.jobs.smtp import SmtpServer, text_of

__all__ = ["smtp"]

pytestmark = pytest.mark.django_db(transaction=True)

TODAY = date(2027, 3, 8)
SITE = "https://kanban.example.com"


@pytest.fixture
def team(settings: Any, smtp: SmtpServer) -> dict[str, Any]:
    settings.KANBAN_SITE_URL = SITE
    alice = a_user("alice", email="alice@example.com")
    bob = a_user("bob", email="bob@example.com", first_name="Bob")
    carol = a_user("carol", email="carol@example.com")
    board = board_create(user=alice, name="Launch", template="board")
    for person in (bob, carol):
        membership_set(user=person, project=board, role=Role.DEVELOPER)
    email_settings_set(user=carol, email="carol@example.com", choice="digest")
    return {"alice": alice, "bob": bob, "carol": carol, "board": board}


def cards(team: dict[str, Any], **by_id: dict[str, Any]) -> None:
    def put(key: str, value: Any) -> None:
        project_kv_set(
            target=Target(user=team["alice"], project_id=team["board"].id),
            key=key,
            value=value,
            provenance=Provenance(via="cli"),
        )

    for card_id, fields in by_id.items():
        put(f"card:{card_id}", {"id": card_id, "column": "todo", "rank": "m", **fields})
    put("board:cards", list(by_id))


def inbox(user: Any) -> list[str]:
    return [item["text"] for item in notifications_list(user=user)["notifications"]]


def test_a_card_due_tomorrow_and_one_overdue_remind_their_assignees_once(
    team: dict[str, Any], smtp: SmtpServer
) -> None:
    cards(
        team,
        venue={"title": "Book the venue", "due": "2027-03-09", "assignees": ["bob"]},
        badges={"title": "Print the badges", "due": "2027-03-01", "assignees": ["carol"]},
        later={"title": "Thank the speakers", "due": "2027-03-20", "assignees": ["bob"]},
        done={"title": "Pick a date", "due": "2027-02-01", "assignees": ["bob"], "column": "done"},
        gone={"title": "Old plan", "due": "2027-02-01", "assignees": ["bob"], "archived": True},
        nobody={"title": "Someday", "due": "2027-02-01", "assignees": ["zoe"]},
    )

    assert due_reminders_send(today=TODAY) == 2
    assert due_reminders_send(today=TODAY) == 0, "a second run the same day sends nothing new"

    assert inbox(team["bob"]) == ["Due tomorrow (Mar 9, 2027): Book the venue"]
    assert inbox(team["carol"]) == ["Overdue since Mar 1, 2027: Print the badges"]
    assert inbox(team["alice"]) == [], "alice is assigned nothing"
    run_worker()
    [mail] = smtp.wait_for(1)
    assert mail["To"] == "bob@example.com"
    assert mail["Subject"] == "Kanban on Launch: Due tomorrow (Mar 9, 2027): Book the venue"
    assert f"{SITE}/boards/{team['board'].id}/#card=venue" in text_of(mail)

    assert digests_send() == 1, "carol reads hers in her digest"
    run_worker()
    assert "Print the badges" in text_of(smtp.wait_for(2)[-1])

    # The next day: nothing new for carol's card, which reminded her already.
    assert due_reminders_send(today=date(2027, 3, 9)) == 0


def test_a_due_date_moved_later_reminds_again_and_the_command_says_how_many(
    team: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    cards(team, venue={"title": "Book the venue", "due": "2027-03-01", "assignees": ["bob"]})
    assert due_reminders_send(today=TODAY) == 1
    cards(team, venue={"title": "Book the venue", "due": "2027-03-05", "assignees": ["bob"]})

    assert due_reminders_send(today=TODAY) == 1
    assert inbox(team["bob"]) == [
        "Overdue since Mar 5, 2027: Book the venue",
        "Overdue since Mar 1, 2027: Book the venue",
    ]
    assert OutgoingEmail.objects.count() == 2

    call_command("due_reminders")
    assert "due-date reminders" in capsys.readouterr().out
