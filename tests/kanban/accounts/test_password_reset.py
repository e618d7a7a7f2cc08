"""A forgotten password: the mail goes through the worker to a real SMTP server process, its
link sets a new password once, every other session of the account ends, an old link is
refused, the form is throttled like sign-in, and a server without email says so."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.test import Client
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from kanban.models import OutgoingEmail
from tests.factories import a_user
from tests.kanban.jobs.conftest import run_worker, smtp
from tests.kanban.jobs.smtp import SmtpServer, html_of, text_of

__all__ = ["smtp"]  # the real SMTP server's fixture, shared with the jobs' tests

pytestmark = pytest.mark.django_db(transaction=True)

OLD, NEW = "old horse battery", "correct staple 42!"
LINK = re.compile(r"http://testserver(/accounts/reset/[^/\s]+/[^/\s]+/)")


@pytest.fixture
def alice(db: None) -> Any:
    return a_user("alice", password=OLD, email="alice@example.com")


def signed_in(username: str, password: str) -> Client:
    client = Client()
    assert client.login(username=username, password=password)
    return client


def ask_for_a_link(email: str = "alice@example.com", client: Client | None = None) -> Any:
    return (client or Client()).post("/accounts/password_reset/", {"email": email})


def the_link(smtp: SmtpServer) -> str:
    run_worker()
    [mail] = smtp.wait_for(1)
    found = LINK.search(text_of(mail))
    assert found, text_of(mail)
    assert found.group(0) in html_of(mail), "the HTML part links the same page"
    return found.group(1)


def choose(client: Client, link: str, password: str) -> Any:
    form = client.get(link, follow=True)
    return client.post(
        form.redirect_chain[-1][0] if form.redirect_chain else link,
        {"new_password1": password, "new_password2": password},
    )


def test_the_login_page_offers_a_reset() -> None:
    assert 'href="/accounts/password_reset/"' in Client().get("/accounts/login/").content.decode()


def test_alice_resets_her_password_and_her_other_sessions_end(smtp: SmtpServer, alice: Any) -> None:
    laptop = signed_in("alice", OLD)
    assert laptop.get("/").status_code == 200

    asked = ask_for_a_link()
    assert asked.status_code == 302 and asked["Location"] == "/accounts/password_reset/done/"
    assert smtp.messages() == [], "the request only queues the mail"
    link = the_link(smtp)
    [mail] = smtp.messages()
    assert mail["To"] == "alice@example.com" and "@alice" in text_of(mail)

    phone = Client()
    done = choose(phone, link, NEW)
    assert done.status_code == 302 and done["Location"] == "/accounts/reset/done/"
    assert "Your password is changed" in phone.get(done["Location"]).content.decode()

    assert laptop.get("/")["Location"].startswith("/accounts/login/"), "the old session ended"
    assert not Client().login(username="alice", password=OLD)
    assert signed_in("alice", NEW).get("/").status_code == 200
    assert OutgoingEmail.objects.get().body == "", "the sent link is not kept"


def test_a_used_link_is_refused(smtp: SmtpServer, alice: Any) -> None:
    ask_for_a_link()
    link = the_link(smtp)
    choose(Client(), link, NEW)

    again = Client().get(link, follow=True).content.decode()
    assert "This link no longer works" in again
    choose(Client(), link, "another password 7?")
    assert signed_in("alice", NEW)


def test_an_expired_link_is_refused(alice: Any, settings: Any, monkeypatch: Any) -> None:
    settings.PASSWORD_RESET_TIMEOUT = 3600
    then = timezone.now() - timedelta(hours=2)
    monkeypatch.setattr(default_token_generator, "_now", lambda: then.replace(tzinfo=None))
    token = default_token_generator.make_token(alice)
    monkeypatch.undo()
    link = f"/accounts/reset/{urlsafe_base64_encode(force_bytes(alice.pk))}/{token}/"

    page = Client().get(link, follow=True).content.decode()
    assert "This link no longer works" in page
    choose(Client(), link, NEW)
    assert signed_in("alice", OLD), "the password stayed"


def test_a_weak_new_password_is_refused_with_the_reason(smtp: SmtpServer, alice: Any) -> None:
    ask_for_a_link()
    page = choose(Client(), the_link(smtp), "password")
    assert page.status_code == 200 and "too common" in page.content.decode()
    assert signed_in("alice", OLD)


def test_an_unknown_address_looks_the_same_and_sends_nothing(smtp: SmtpServer, alice: Any) -> None:
    asked = ask_for_a_link("nobody@example.com")
    assert asked.status_code == 302 and asked["Location"] == "/accounts/password_reset/done/"
    assert not OutgoingEmail.objects.exists()


def test_requests_are_throttled_like_sign_in(smtp: SmtpServer, alice: Any, settings: Any) -> None:
    settings.KANBAN_LOGIN_WINDOW = 900
    for _ in range(3):
        assert ask_for_a_link().status_code == 302
    refused = ask_for_a_link()
    assert refused.status_code == 200
    assert "Too many password reset requests. Try again in 15 minutes." in (
        refused.content.decode()
    )
    assert OutgoingEmail.objects.count() == 3, "a refused request sends nothing"

    # One address asking for many mailboxes is held to the sign-in limit: three counted so
    # far (a refused request counts nothing), two more pass.
    settings.KANBAN_LOGIN_MAX_FAILURES = 5
    for mailbox in ("bob@example.com", "carol@example.com"):
        assert ask_for_a_link(mailbox).status_code == 302
    assert ask_for_a_link("dave@example.com").status_code == 200, "the address's limit"


def test_a_server_without_email_says_to_ask_an_administrator(alice: Any, settings: Any) -> None:
    settings.KANBAN_EMAIL_ENABLED = False
    page = Client().get("/accounts/password_reset/").content.decode()
    assert "Ask an administrator to set a new password for you." in page
    assert "<form" not in page.split("<main", 1)[-1]
    posted = ask_for_a_link()
    assert posted.status_code == 200 and not OutgoingEmail.objects.exists()
