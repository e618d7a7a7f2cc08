"""Steps browser tests share: logging in and keeping screenshots."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.test import Client

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.contrib.auth.models import User
    from playwright.sync_api import BrowserContext, Page

    from tests.live import LiveServer

SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"
_SCREENSHOT_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,79}")


def login(page: Page, username: str, password: str) -> None:
    """Log in through the real form, as a person would, and wait to leave the login page.

    Relative to the page's ``base_url``; raises with the form's complaint when refused.
    """
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    if "/accounts/login/" in page.url:
        refusal = page.get_by_role("alert")
        complaint = refusal.inner_text() if refusal.count() else "no message"
        raise AssertionError(f"{username} could not log in: {complaint}")


def log_in_by_cookie(context: BrowserContext, user: User, base_url: str) -> None:
    """Give ``context`` a real session for ``user`` without the form (faster; for tests
    about something else). The session row is committed, so workers see it."""
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME]
    context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": session.value, "url": base_url}]
    )


def signed_in_page(
    user: User, new_context: Callable[..., BrowserContext], server: LiveServer
) -> Page:
    """A page in a fresh context of ``server``, ``user`` signed in by cookie."""
    context = new_context(base_url=server.url)
    log_in_by_cookie(context, user, server.url)
    return context.new_page()


def screenshot(page: Page, name: str, *, full_page: bool = True) -> Path:
    """Save ``var/screenshots/<name>.png`` (overwriting) and return its path."""
    if not _SCREENSHOT_NAME.fullmatch(name):
        raise ValueError(f"screenshot name {name!r} must match {_SCREENSHOT_NAME.pattern}")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
