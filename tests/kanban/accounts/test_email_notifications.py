"""Notifications by email, each person's choice: alice (immediately) gets one mail for a
mention, linking the card; carol's daily digest holds her two assignments; dave (off) and
erin (no address) get none; every mail's signed unsubscribe link works without signing in.
The mails go through the worker to a real SMTP server process."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from kanban.accounts.email_notifications import (
    digests_send,
    email_notifications_of,
    email_settings_set,
    unsubscribe_url,
)
from kanban.data.notifications import notification_send
from kanban.models import OutgoingEmail
from tests.factories import a_project, a_user
from tests.kanban.jobs.conftest import run_worker, smtp
from tests.kanban.jobs.smtp import SmtpServer, html_of, text_of

__all__ = ["smtp"]  # the real SMTP server's fixture, shared with the jobs' tests

pytestmark = pytest.mark.django_db(transaction=True)

SITE = "https://kanban.example.com"


@pytest.fixture
def team(settings: Any, smtp: SmtpServer) -> dict[str, Any]:
    settings.KANBAN_SITE_URL = SITE
    people = {
        "alice": a_user("alice", email="alice@example.com"),
        "bob": a_user("bob", email="bob@example.com", first_name="Bob"),
        "carol": a_user("carol", email="carol@example.com"),
        "dave": a_user("dave", email="dave@example.com"),
        "erin": a_user("erin"),
    }
    board = a_project(
        name="Launch",
        owner=people["bob"],
        members={people[name]: "developer" for name in ("alice", "carol", "dave", "erin")},
    )
    email_settings_set(user=people["carol"], email="carol@example.com", choice="digest")
    email_settings_set(user=people["dave"], email="dave@example.com", choice="off")
    return {**people, "board": board}


def notify(team: dict[str, Any], users: list[str], text: str, card: str = "c1") -> None:
    notification_send(
        actor=team["bob"],
        project_id=team["board"].id,
        users=users,
        text=text,
        card=card,
        via="mention",
    )


def test_alice_gets_one_mail_for_a_mention_that_opens_the_card(
    team: dict[str, Any], smtp: SmtpServer
) -> None:
    notify(team, ["alice", "dave", "erin", "carol"], "@alice can you check the venue?")
    assert OutgoingEmail.objects.count() == 1, "only alice wants it now, with an address"
    run_worker()
    [mail] = smtp.wait_for(1)
    assert mail["To"] == "alice@example.com"
    assert mail["Subject"] == "Bob on Launch: @alice can you check the venue?"
    card = f"{SITE}/boards/{team['board'].id}/#card=c1"
    assert card in text_of(mail) and f'href="{card}"' in html_of(mail)
    assert mail["List-Unsubscribe"].strip().startswith(f"<{SITE}/email/unsubscribe/")
    assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"


def test_carols_daily_digest_holds_her_two_assignments(
    team: dict[str, Any], smtp: SmtpServer
) -> None:
    notify(team, ["carol"], "You were assigned to Book the venue", card="c1")
    notify(team, ["carol"], "You were assigned to Print the badges", card="c2")
    assert not OutgoingEmail.objects.exists(), "nothing until the digest"

    assert digests_send() == 1
    assert digests_send() == 0, "a second run sends nothing new"
    run_worker()
    [mail] = smtp.wait_for(1)
    assert mail["To"] == "carol@example.com" and mail["Subject"].endswith("2 notifications")
    body = text_of(mail)
    assert "Book the venue" in body and "Print the badges" in body
    assert f"/boards/{team['board'].id}/#card=c2" in body

    notify(team, ["carol"], "You were assigned to Order lunch", card="c3")
    assert digests_send() == 1
    run_worker()
    assert "Order lunch" in text_of(smtp.wait_for(2)[-1])
    assert "Book the venue" not in text_of(smtp.messages()[-1])


def test_the_unsubscribe_link_works_without_signing_in(team: dict[str, Any]) -> None:
    link = unsubscribe_url(user_id=team["alice"].pk).removeprefix(SITE)
    stranger = Client(enforce_csrf_checks=True)
    asked = stranger.get(link)
    assert (
        asked.status_code == 200
        and "Stop notification emails for @alice?" in asked.content.decode()
    )
    assert email_notifications_of(user=team["alice"]) == "immediately", "opening it changes nothing"

    done = stranger.post(link)
    assert done.status_code == 200 and "gets no more notification emails" in done.content.decode()
    assert email_notifications_of(user=team["alice"]) == "off"
    notify(team, ["alice"], "still there?")
    assert not OutgoingEmail.objects.exists()

    forged = re.sub(r"/([^/]+)$", lambda m: "/" + m.group(1)[:-2] + "xx", link)
    assert stranger.post(forged).status_code == 400
    assert stranger.post("/email/unsubscribe/not-a-token").status_code == 400


def test_alice_chooses_on_her_account_page_and_bad_input_writes_nothing(
    team: dict[str, Any],
) -> None:
    alice = Client()
    alice.force_login(team["alice"])
    page = alice.get("/account/email").content.decode()
    assert 'value="alice@example.com"' in page and 'value="immediately" checked' in page

    saved = alice.post(
        "/account/email", {"email": "a@example.org", "email_notifications": "digest"}
    )
    assert saved.status_code == 302
    team["alice"].refresh_from_db()
    assert team["alice"].email == "a@example.org"
    assert email_notifications_of(user=team["alice"]) == "digest"

    for bad in (
        {"email": "not an address", "email_notifications": "off"},
        {"email": "a@example.org", "email_notifications": "hourly"},
    ):
        refused = alice.post("/account/email", bad)
        assert refused.status_code == 200 and 'role="alert"' in refused.content.decode()
    team["alice"].refresh_from_db()
    assert team["alice"].email == "a@example.org"
    assert email_notifications_of(user=team["alice"]) == "digest"
    assert Client().get("/account/email").status_code == 302, "signed in only"
