"""A forgotten password in Chromium: alice asks from the login page, the worker sends the mail
to a real SMTP server process, she opens its link, chooses a new password and signs in with
it; the laptop she was signed in on is signed out, and the link, used, works no more. And
the mail waits, retried, while the mail server is down, for staff to see in the admin."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from kanban.models import EmailStatus, OutgoingEmail
from tests.browser.helpers import login, signed_in_page
from tests.factories import a_user
from tests.kanban.jobs.conftest import run_worker, smtp
from tests.kanban.jobs.smtp import SmtpServer, text_of

__all__ = ["smtp"]  # the real SMTP server process, shared with the jobs' tests

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OLD, NEW = "old horse battery", "correct staple 42!"


def ask_for_a_link(page: Page, email: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_test_id("forgot-password").click()
    page.get_by_label("Email address").fill(email)
    page.get_by_test_id("password-reset-send").click()
    expect(page.get_by_test_id("password-reset-done")).to_contain_text("Check your email")


def test_alice_resets_her_forgotten_password_from_a_mail(
    new_context: Any, live_server: Any, smtp: SmtpServer
) -> None:
    alice = a_user("alice", password=OLD, email="alice@example.com")
    laptop = signed_in_page(alice, new_context, live_server)
    laptop.goto("/")
    expect(laptop).to_have_url(f"{live_server.url}/")

    phone = new_context(base_url=live_server.url).new_page()
    ask_for_a_link(phone, "alice@example.com")
    assert smtp.messages() == [], "the page answered before any mail went"

    run_worker()
    [mail] = smtp.wait_for(1)
    assert (
        mail["Subject"] == f"Choose a new password for 127.0.0.1:{live_server.url.split(':')[-1]}"
    )
    found = re.search(r"http://\S+/accounts/reset/\S+/", text_of(mail))
    assert found, text_of(mail)
    link = found.group(0)
    assert link.startswith(live_server.url)

    phone.goto(link)
    form = phone.get_by_test_id("password-reset-confirm")
    expect(form).to_contain_text("For @alice")
    phone.get_by_label("New password").fill(NEW)
    phone.get_by_label("The same password again").fill(NEW)
    phone.get_by_test_id("password-reset-save").click()
    expect(phone.get_by_test_id("password-reset-complete")).to_contain_text(
        "Your password is changed"
    )
    phone.get_by_role("link", name="Log in").click()
    login(phone, "alice", NEW)
    expect(phone).to_have_url(f"{live_server.url}/")

    laptop.reload()
    expect(laptop).to_have_url(re.compile(r"/accounts/login/"))

    again = new_context(base_url=live_server.url).new_page()
    again.goto(link)
    expect(again.get_by_test_id("password-reset-invalid")).to_be_visible()
    expect(again.get_by_role("link", name="Send me a new link")).to_be_visible()


def test_the_mail_waits_while_the_mail_server_is_down_and_staff_see_why(
    new_context: Any, live_server: Any, smtp: SmtpServer, settings: Any
) -> None:
    settings.KANBAN_EMAIL_RETRY_SECONDS = 0
    settings.KANBAN_EMAIL_ATTEMPTS = 2
    a_user("alice", password=OLD, email="alice@example.com")
    staff = a_user("root", superuser=True)
    smtp.stop()

    ask_for_a_link(new_context(base_url=live_server.url).new_page(), "alice@example.com")
    run_worker()
    failed = OutgoingEmail.objects.get()
    assert failed.status == EmailStatus.FAILED and failed.attempts == 2

    admin = signed_in_page(staff, new_context, live_server)
    admin.goto("/admin/kanban/outgoingemail/")
    row = admin.locator("#result_list tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("alice@example.com")
    expect(row).to_contain_text("ConnectionRefusedError")

    smtp.start()
    row.locator("input[type=checkbox]").check()
    admin.locator("select[name=action]").select_option("send_again")
    admin.get_by_role("button", name="Go").click()
    expect(admin.locator(".messagelist")).to_contain_text("Queued 1 failed email(s) again.")
    run_worker()
    [mail] = smtp.wait_for(1)
    assert "/accounts/reset/" in text_of(mail), "nothing lost: the same mail, its link inside"
    admin.reload()
    expect(admin.locator("#result_list tbody tr")).to_contain_text("Sent")
