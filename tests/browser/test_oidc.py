"""Single sign-on in Chromium against a real OpenID provider process (tests/oidc/provider.mjs):
dave's first sign-in through the button makes his account; erin, in the provider's staff
group, is made staff; enforced, a page sends people straight to the provider and password
sign-in is for staff; and every bad answer (a wrong state, a replayed code, an expired ID
token, a provider that is down, a 10 MB claim, a look-alike name) is refused on the sign-in
page with a message, no account made."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from tests.factories import a_user
from tests.live import LiveServer, free_port
from tests.oidc.provider import BUTTON, OidcProvider

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def provider() -> Iterator[OidcProvider]:
    started = OidcProvider.start()
    yield started
    started.stop()


@pytest.fixture
def sso_server(
    provider: OidcProvider, live_servers: Callable[..., list[LiveServer]]
) -> Callable[..., LiveServer]:
    def start(**extra: str) -> LiveServer:
        provider.check_alive()
        (server,) = live_servers(1, env=provider.env(**extra))
        return server

    return start


def page_of(new_context: Callable[..., Any], server: LiveServer) -> Page:
    page: Page = new_context(base_url=server.url).new_page()
    return page


def at_provider(page: Page, login: str) -> None:
    """Signs in at the provider's own pages as ``login`` and agrees to share."""
    page.locator("input[name=login]").fill(login)
    page.locator("input[name=password]").fill("any password")
    page.get_by_role("button", name="Sign-in").click()
    page.get_by_role("button", name="Continue").click()


def provider_answer(page: Page, login: str) -> str:
    """Like ``at_provider``, but stops at the provider's answer (the URL of this server's
    callback with the code and state), leaving the browser at the provider."""
    page.locator("input[name=login]").fill(login)
    page.locator("input[name=password]").fill("any password")
    page.get_by_role("button", name="Sign-in").click()
    location = str(page.locator("form").get_attribute("action"))
    while "/oidc/callback/" not in location:
        at = urljoin(page.url, location)
        sent = (
            page.request.post(at, form={"prompt": "consent"}, max_redirects=0)
            if ("/interaction/" in at)
            else page.request.get(at, max_redirects=0)
        )
        location = sent.headers["location"]
    return location


def sign_in(page: Page, login: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_role("link", name=BUTTON).click()
    at_provider(page, login)


def people() -> list[str]:
    return sorted(get_user_model().objects.values_list("username", flat=True))


def refusal(page: Page, says: str) -> None:
    expect(page.get_by_test_id("oidc-error")).to_contain_text(says)
    expect(page.get_by_test_id("oidc-error")).to_contain_text("Nobody was signed in")
    expect(page.get_by_role("link", name=BUTTON)).to_be_visible()  # to start again


def test_daves_first_sign_in_makes_his_account_and_erin_is_staff(
    sso_server: Callable[..., LiveServer], new_context: Callable[..., Any]
) -> None:
    server = sso_server()
    page = page_of(new_context, server)
    page.goto("/accounts/login/")
    expect(page.get_by_role("link", name=BUTTON)).to_be_visible()
    expect(page.get_by_label("Username")).to_be_visible()  # not enforced: passwords still work

    sign_in(page, "dave")
    expect(page).to_have_url(f"{server.url}/")
    dave = get_user_model().objects.get(username="dave")
    assert dave.email == "dave@example.com"
    assert not dave.has_usable_password() and not dave.is_staff

    again = page_of(new_context, server)
    sign_in(again, "dave")
    expect(again).to_have_url(f"{server.url}/")
    assert people() == ["dave"], "the second sign-in is the same account"

    erin = page_of(new_context, server)
    sign_in(erin, "erin")
    expect(erin).to_have_url(f"{server.url}/")
    assert get_user_model().objects.get(username="erin").is_staff


def test_enforced_the_page_goes_to_the_provider_and_passwords_are_for_staff(
    sso_server: Callable[..., LiveServer], provider: OidcProvider, new_context: Callable[..., Any]
) -> None:
    a_user("root", password="root password 1", staff=True)
    a_user("alice", password="alice password 1")
    server = sso_server(KANBAN_OIDC_ENFORCED="1")

    page = page_of(new_context, server)
    page.goto("/")
    expect(page).to_have_url(re.compile(rf"^{re.escape(provider.issuer)}/interaction/"))
    at_provider(page, "dave")
    expect(page).to_have_url(f"{server.url}/")

    bare = page_of(new_context, server)
    bare.goto("/accounts/login/")  # where sign-out lands: no bounce back in
    expect(bare.get_by_role("link", name=BUTTON)).to_be_visible()
    expect(bare.get_by_label("Username")).to_have_count(0)

    alice = page_of(new_context, server)
    alice.goto("/accounts/login/?local=1")
    alice.get_by_label("Username").fill("alice")
    alice.get_by_label("Password").fill("alice password 1")
    alice.get_by_role("button", name="Log in").click()
    expect(alice.get_by_role("alert")).to_contain_text("password sign-in is for staff")

    bare.get_by_test_id("oidc-local").click()
    staff = bare
    staff.get_by_label("Username").fill("root")
    staff.get_by_label("Password").fill("root password 1")
    staff.get_by_role("button", name="Log in").click()
    expect(staff).to_have_url(f"{server.url}/")


def test_a_wrong_state_a_cancel_and_a_replayed_code_are_refused(
    sso_server: Callable[..., LiveServer], provider: OidcProvider, new_context: Callable[..., Any]
) -> None:
    server = sso_server()
    forged = page_of(new_context, server)

    forged.goto("/accounts/login/")
    forged.get_by_role("link", name=BUTTON).click()
    answer = provider_answer(forged, "dave")
    forged.goto(answer.replace("state=", "state=forged"))
    refusal(forged, "not started in this browser")
    assert people() == []

    declined = page_of(new_context, server)
    declined.goto("/accounts/login/")
    declined.get_by_role("link", name=BUTTON).click()
    declined.get_by_role("link", name=re.compile("Cancel")).click()
    refusal(declined, "The sign-in provider said: End-User aborted interaction")
    assert people() == []

    dave = page_of(new_context, server)
    seen: list[str] = []
    dave.on("request", lambda r: seen.append(r.url) if "/oidc/callback/" in r.url else None)
    sign_in(dave, "dave")
    expect(dave).to_have_url(f"{server.url}/")
    code = parse_qs(urlsplit(seen[0]).query)["code"][0]

    # Mallory starts a sign-in of her own (her browser holds its state) and brings dave's
    # code back with it.
    mallory = page_of(new_context, server)
    asked: list[str] = []
    mallory.on("request", lambda r: asked.append(r.url) if "/auth?" in r.url else None)
    mallory.goto("/accounts/login/")
    mallory.get_by_role("link", name=BUTTON).click()
    expect(mallory.locator("input[name=login]")).to_be_visible()
    state = parse_qs(urlsplit(asked[0]).query)["state"][0]
    mallory.goto(f"/oidc/callback/?code={code}&state={state}")
    refusal(mallory, "refused the sign-in code")
    assert people() == ["dave"]


def test_an_expired_id_token_is_refused(
    live_servers: Callable[..., list[LiveServer]], new_context: Callable[..., Any]
) -> None:
    late = OidcProvider.start(clock_skew=-600)  # its ID tokens expired 5 minutes ago
    try:
        (server,) = live_servers(1, env=late.env())
        page = page_of(new_context, server)
        sign_in(page, "dave")
        refusal(page, "The identity token has expired")
    finally:
        late.stop()
    assert people() == []


def test_a_provider_that_is_down_a_10_mb_claim_and_a_look_alike_name_are_refused(
    sso_server: Callable[..., LiveServer],
    live_servers: Callable[..., list[LiveServer]],
    new_context: Callable[..., Any],
) -> None:
    server = sso_server()
    huge = page_of(new_context, server)
    sign_in(huge, "huge")
    refusal(huge, "over 256 KB")
    expect(huge.get_by_test_id("oidc-error")).to_have_count(1)

    lookalike = page_of(new_context, server)
    sign_in(lookalike, "lookalike")
    refusal(lookalike, "cannot be used here")
    assert people() == []

    nobody = f"http://127.0.0.1:{free_port()}"
    down = OidcProvider.__new__(OidcProvider)
    down.issuer = nobody
    (dead,) = live_servers(1, env=down.env())
    page = page_of(new_context, dead)
    page.goto("/accounts/login/")
    page.get_by_role("link", name=BUTTON).click()
    refusal(page, "does not answer")
    assert people() == []
