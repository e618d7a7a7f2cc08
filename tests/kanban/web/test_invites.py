"""The invite page's refusals: a sign-up past a daily limit is told why and when to try
again and makes nobody; the address counted is the one a trusted proxy saw; with staff links
only, the page of another's link offers no sign-up form, only to log in."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from kanban.accounts.invites import invite_create
from tests.factories import a_project, a_user

pytestmark = pytest.mark.django_db

STRONG = "a long enough passphrase 7"


@pytest.fixture
def crowd(settings: Any) -> str:
    """mallory's 100-use guest link, as a path."""
    settings.KANBAN_INVITE_SIGNUPS_PER_INVITER_DAY = 1000
    settings.KANBAN_INVITE_SIGNUPS_PER_ADDRESS_DAY = 2
    mallory = a_user("mallory")
    board = a_project(name="Crowd", owner=mallory)
    return invite_create(actor=mallory, project_id=board.id, role="guest", uses=100).path


def sign_up(path: str, username: str, **request: Any) -> Any:
    """``request``: the request's environ (REMOTE_ADDR, HTTP_X_FORWARDED_FOR)."""
    form = {"username": username, "password": STRONG, "password2": STRONG}
    return Client().post(path, form, **request)


def accounts() -> int:
    return get_user_model().objects.count()


def test_a_sign_up_past_the_addresss_daily_limit_is_told_why_and_makes_nobody(crowd: str) -> None:
    for n in range(2):
        assert sign_up(crowd, f"sock{n}", REMOTE_ADDR="203.0.113.5").status_code == 302
    before = accounts()

    refused = sign_up(crowd, "sock2", REMOTE_ADDR="203.0.113.5")

    assert refused.status_code == 429 and refused["Retry-After"].isdecimal()
    page = refused.content.decode()
    assert "Too many accounts were made from your address today. Try again in 24 hours." in page
    assert 'value="sock2"' in page, "the form keeps what was typed"
    assert "_auth_user_id" not in refused.wsgi_request.session
    assert accounts() == before


def test_behind_a_trusted_proxy_the_address_it_saw_is_counted_not_one_the_client_wrote(
    crowd: str, settings: Any
) -> None:
    settings.KANBAN_TRUSTED_PROXIES = ["127.0.0.1/32"]

    def through_the_proxy(username: str, client_wrote: str) -> int:
        forwarded = f"{client_wrote}, 203.0.113.5"  # the proxy appends the peer it saw
        return sign_up(
            crowd, username, REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=forwarded
        ).status_code

    assert [through_the_proxy(f"sock{n}", f"192.0.2.{n}") for n in range(3)] == [302, 302, 429]
    assert sign_up(crowd, "gina", REMOTE_ADDR="198.51.100.7").status_code == 302


def test_with_staff_links_only_the_page_of_mallorys_link_asks_to_log_in_instead(
    crowd: str, settings: Any
) -> None:
    settings.KANBAN_INVITE_SIGNUPS = "staff"
    page = Client().get(crowd)
    assert page.status_code == 200
    text = page.content.decode()
    assert 'data-testid="invite-sign-up"' not in text and "log in" in text.lower()

    before = accounts()
    refused = sign_up(crowd, "sock1")
    assert refused.status_code == 403 and accounts() == before

    bob: Any = a_user("bob")
    signed_in = Client()
    signed_in.force_login(bob)
    assert 'data-testid="invite-accept"' in signed_in.get(crowd).content.decode()
    assert signed_in.post(crowd).status_code == 302
