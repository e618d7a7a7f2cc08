"""Staff see outgoing mail in the admin: a failure with the mail server's answer, the runs it
took, "send again", and "Send a test email" that goes the way every mail goes."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.mail import send_mail
from django.test import Client

from kanban.models import EmailStatus, OutgoingEmail
from tests.factories import a_user
from tests.kanban.jobs.conftest import run_worker
from tests.kanban.jobs.smtp import SmtpServer

pytestmark = pytest.mark.django_db(transaction=True)


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_staff_see_a_failed_mail_with_the_servers_answer_and_send_it_again(
    smtp: SmtpServer, settings: Any
) -> None:
    settings.KANBAN_EMAIL_ATTEMPTS = 2
    settings.KANBAN_EMAIL_RETRY_SECONDS = 0
    alice = signed_in(a_user("alice", superuser=True))
    send_mail("Reset your password", "secret link", None, ["busy@example.com"])
    run_worker()
    failed = OutgoingEmail.objects.get()

    listing = alice.get("/admin/kanban/outgoingemail/?status=failed").content.decode()
    assert "busy@example.com" in listing and "451 4.3.2 Mailbox busy" in listing
    page = alice.get(f"/admin/kanban/outgoingemail/{failed.pk}/change/").content.decode()
    assert page.count("451 4.3.2 Mailbox busy, try again later") >= 3, "the answer and each run"
    assert "secret link" not in page, "a mail's words are not shown"

    OutgoingEmail.objects.filter(pk=failed.pk).update(to=["alice@example.com"])
    alice.post(
        "/admin/kanban/outgoingemail/",
        {"action": "send_again", "_selected_action": [str(failed.pk)]},
    )
    run_worker()
    assert OutgoingEmail.objects.get().status == EmailStatus.SENT
    assert [message["Subject"] for message in smtp.wait_for(1)] == ["Reset your password"]


def test_send_a_test_email_from_the_admin(smtp: SmtpServer) -> None:
    alice = signed_in(a_user("alice", superuser=True, email="alice@example.com"))
    listing = alice.get("/admin/kanban/outgoingemail/").content.decode()
    assert "Send a test email" in listing
    form = alice.get("/admin/kanban/outgoingemail/test/").content.decode()
    assert 'value="alice@example.com"' in form, "the form offers her own address"

    refused = alice.post("/admin/kanban/outgoingemail/test/", {"to": "nobody"})
    assert "is not an email address" in refused.content.decode()
    assert not OutgoingEmail.objects.exists()

    sent = alice.post("/admin/kanban/outgoingemail/test/", {"to": "ops@example.com"})
    assert sent.status_code == 302
    run_worker()
    [arrived] = smtp.wait_for(1)
    assert arrived["To"] == "ops@example.com" and arrived["Subject"] == "Test email from Kanban"


def test_people_who_are_not_staff_see_none_of_it(smtp: SmtpServer) -> None:
    bob = signed_in(a_user("bob"))
    for url in ("/admin/kanban/outgoingemail/", "/admin/kanban/outgoingemail/test/"):
        assert bob.get(url).status_code == 302  # to the admin's sign-in
    carol = signed_in(a_user("carol", staff=True))
    assert carol.get("/admin/kanban/outgoingemail/").status_code == 403
    assert (
        carol.post("/admin/kanban/outgoingemail/test/", {"to": "x@example.com"}).status_code == 403
    )
    assert not OutgoingEmail.objects.exists()
