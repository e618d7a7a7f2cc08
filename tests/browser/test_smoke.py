"""A person in Chromium against a real daphne worker: the login form, the dashboard, and
the screenshots the README uses."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.chromium import Chromium
from tests.browser.helpers import SCREENSHOTS, log_in_by_cookie, login, screenshot
from tests.factories import a_user
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"


@pytest.fixture
def alice() -> User:
    return a_user("alice", password=PASSWORD)


def test_a_visitor_is_sent_to_the_login_form(page: Page, live_server: LiveServer) -> None:
    page.goto("/")
    expect(page).to_have_url(f"{live_server.url}/accounts/login/?next=/")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()


def test_alice_logs_in_through_the_form_and_lands_on_her_dashboard(
    page: Page, live_server: LiveServer, alice: User
) -> None:
    login(page, "alice", PASSWORD)
    expect(page).to_have_url(f"{live_server.url}/")
    expect(page.get_by_role("heading", name="Boards")).to_be_visible()
    expect(page.get_by_text("You have no boards yet.")).to_be_visible()
    expect(page.locator("header.top")).to_contain_text("alice")
    # The ORM works in the middle of a browser test, and sees what the worker wrote.
    (session,) = Session.objects.all()
    assert session.get_decoded()["_auth_user_id"] == str(alice.pk)


def test_a_wrong_password_keeps_alice_on_the_login_form(page: Page, alice: User) -> None:
    with pytest.raises(AssertionError, match="didn't match"):
        login(page, "alice", "not her password")
    expect(page.get_by_role("alert")).to_be_visible()


def test_a_session_made_in_the_test_opens_the_dashboard_without_the_form(
    new_context: Callable[..., BrowserContext], live_server: LiveServer, alice: User
) -> None:
    context = new_context(base_url=live_server.url)
    log_in_by_cookie(context, alice, live_server.url)
    page = context.new_page()
    page.goto("/")
    expect(page).to_have_url(f"{live_server.url}/")
    expect(page.get_by_role("heading", name="Boards")).to_be_visible()


def test_each_context_is_a_separate_person(
    new_context: Callable[..., BrowserContext], live_server: LiveServer, alice: User
) -> None:
    alices = new_context(base_url=live_server.url).new_page()
    login(alices, "alice", PASSWORD)
    strangers = new_context(base_url=live_server.url).new_page()
    strangers.goto("/")
    expect(strangers).to_have_url(re.compile(r"/accounts/login/"))


def test_screenshots_are_saved_as_png_under_var_screenshots(page: Page, alice: User) -> None:
    login(page, "alice", PASSWORD)
    path = screenshot(page, "dashboard-empty")
    assert path == SCREENSHOTS / "dashboard-empty.png"
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(ValueError, match="must match"):
        screenshot(page, "../outside")


async def test_async_tests_and_the_orm_still_work_once_chromium_is_running(
    chromium: Chromium,
) -> None:
    """Playwright's sync API marks its loop as running in this thread; the fixtures clear
    the mark, or this test could not start its own loop and the ORM would refuse."""
    assert chromium.browser.is_connected()
    await sync_to_async(a_user)("bob", password=PASSWORD)
    assert await sync_to_async(User.objects.filter(username="bob").exists)()
