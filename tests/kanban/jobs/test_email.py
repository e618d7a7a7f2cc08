"""Mail leaves through the worker, over SMTP to a real server process: queued by whatever asked
for it, retried with growing waits while the server is down or busy, kept failed with the
server's answer when it refuses for good or runs out of tries, and sent again on request."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.mail import EmailMultiAlternatives, send_mail
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from kanban.accounts.invites import invite_create, invite_email
from kanban.jobs.email import email_send_again, email_test
from kanban.models import EmailStatus, OutgoingEmail
from tests.factories import a_project
from tests.kanban.jobs.conftest import run_worker
from tests.kanban.jobs.smtp import SmtpServer, html_of, text_of

pytestmark = pytest.mark.django_db(transaction=True)


def the_mail() -> OutgoingEmail:
    return OutgoingEmail.objects.get()


def make_due_now() -> None:
    """Time passes: every deferred retry is due."""
    DBTaskResult.objects.filter(status="READY").update(run_after=timezone.now())


def test_a_mail_waits_for_the_worker_then_reaches_the_smtp_server(smtp: SmtpServer) -> None:
    message = EmailMultiAlternatives(
        "Hello", "Plain words", None, ["alice@example.com"], headers={"X-Kanban": "yes"}
    )
    message.attach_alternative("<p>Plain <b>words</b></p>", "text/html")
    message.send()

    queued = the_mail()
    assert queued.status == EmailStatus.QUEUED and queued.attempts == 0
    assert smtp.messages() == [], "the request never talks to the mail server"

    run_worker()

    [arrived] = smtp.wait_for(1)
    assert arrived["To"] == "alice@example.com" and arrived["Subject"] == "Hello"
    assert arrived["X-Kanban"] == "yes"
    assert text_of(arrived).strip() == "Plain words"
    assert "<b>words</b>" in html_of(arrived)
    sent = the_mail()
    assert sent.status == EmailStatus.SENT and sent.attempts == 1 and sent.sent_at
    assert sent.body == sent.html == "", "a sent mail's words are not kept"
    assert [entry["ok"] for entry in sent.log] == [True]


def test_smtp_down_the_mail_is_retried_with_growing_waits_and_nothing_is_lost(
    smtp: SmtpServer, settings: Any
) -> None:
    settings.KANBAN_EMAIL_RETRY_SECONDS = 60
    smtp.stop()
    send_mail("Still there?", "Wait for me", None, ["bob@example.com"])

    run_worker()
    first = the_mail()
    assert first.status == EmailStatus.QUEUED and first.attempts == 1
    assert "ConnectionRefusedError" in first.last_error
    assert first.next_attempt_at is not None
    wait = first.next_attempt_at - timezone.now()
    assert timedelta(seconds=55) < wait <= timedelta(seconds=60)
    run_worker()
    assert the_mail().attempts == 1, "the retry waits for its time"

    make_due_now()
    run_worker()
    second = the_mail()
    assert second.status == EmailStatus.QUEUED and second.attempts == 2
    assert second.next_attempt_at is not None
    assert second.next_attempt_at - timezone.now() > timedelta(seconds=115), "the wait doubles"

    smtp.start()
    make_due_now()
    run_worker()
    [arrived] = smtp.wait_for(1)
    assert arrived["Subject"] == "Still there?" and text_of(arrived).strip() == "Wait for me"
    done = the_mail()
    assert done.status == EmailStatus.SENT and done.attempts == 3
    assert [entry["ok"] for entry in done.log] == [False, False, True]


def test_out_of_tries_the_mail_stays_failed_with_the_answers_and_can_be_sent_again(
    smtp: SmtpServer, settings: Any
) -> None:
    settings.KANBAN_EMAIL_ATTEMPTS = 3
    settings.KANBAN_EMAIL_RETRY_SECONDS = 0
    send_mail("Busy", "Try me", None, ["busy@example.com"])

    run_worker()  # each retry is due at once, so one batch runs all three

    failed = the_mail()
    assert failed.status == EmailStatus.FAILED and failed.attempts == 3
    assert failed.last_error == "busy@example.com: 451 4.3.2 Mailbox busy, try again later"
    assert len(failed.log) == 3 and failed.body == "Try me", "a failed mail keeps its words"
    assert smtp.messages() == []

    OutgoingEmail.objects.filter(id=failed.id).update(to=["carol@example.com"])
    assert email_send_again(email_ids=[failed.id]) == 1
    run_worker()
    [arrived] = smtp.wait_for(1)
    assert arrived["Subject"] == "Busy" and the_mail().status == EmailStatus.SENT


def test_a_permanent_refusal_is_not_retried(smtp: SmtpServer) -> None:
    send_mail("Nobody", "home", None, ["bounce@example.com"])
    run_worker()
    failed = the_mail()
    assert failed.status == EmailStatus.FAILED and failed.attempts == 1
    assert failed.last_error == "bounce@example.com: 550 5.1.1 No such mailbox here"


def test_a_rolled_back_request_sends_nothing(smtp: SmtpServer) -> None:
    from django.db import transaction

    with pytest.raises(RuntimeError), transaction.atomic():
        send_mail("Never", "sent", None, ["alice@example.com"])
        raise RuntimeError("the request failed after asking for a mail")
    assert not OutgoingEmail.objects.exists() and not DBTaskResult.objects.exists()


def test_an_invite_link_goes_by_mail_through_the_worker(smtp: SmtpServer, alice: Any) -> None:
    board = a_project(name="Roadmap", owner=alice)
    created = invite_create(actor=alice, project_id=board.id, role="developer", days=7, uses=1)
    url = f"https://kanban.example.com{created.path}"
    invite_email(actor=alice, created=created, url=url, to="dave@example.com")
    assert smtp.messages() == []
    run_worker()
    [arrived] = smtp.wait_for(1)
    assert arrived["To"] == "dave@example.com" and arrived["Subject"] == "Join Roadmap"
    assert url in text_of(arrived) and "as a developer" in text_of(arrived)
    assert f'href="{url}"' in html_of(arrived) and ">Join Roadmap</a>" in html_of(arrived)


def test_the_test_email_goes_the_same_way(smtp: SmtpServer) -> None:
    queued = email_test(to="staff@example.com")
    assert queued.status == EmailStatus.QUEUED
    run_worker()
    [arrived] = smtp.wait_for(1)
    assert arrived["Subject"] == "Test email from Kanban"
    for bad in ("", "not an address", None):
        with pytest.raises(Exception, match="address"):
            email_test(to=bad)
    assert OutgoingEmail.objects.count() == 1


def test_prune_forgets_mail_sent_long_ago_and_keeps_what_is_not_sent(smtp: SmtpServer) -> None:
    from django.core.management import call_command

    send_mail("Old", "sent", None, ["alice@example.com"])
    send_mail("Recent", "sent", None, ["alice@example.com"])
    send_mail("Refused", "never", None, ["bounce@example.com"])
    run_worker()
    OutgoingEmail.objects.filter(subject="Old").update(sent_at=timezone.now() - timedelta(days=31))
    failed = OutgoingEmail.objects.filter(subject="Refused")
    failed.update(created_at=timezone.now() - timedelta(days=400))

    call_command("prune")

    assert sorted(OutgoingEmail.objects.values_list("subject", flat=True)) == [
        "Recent",
        "Refused",
    ]
