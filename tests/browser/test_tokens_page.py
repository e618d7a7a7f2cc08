"""Personal access tokens in Chromium: alice opens Access tokens from the account menu,
makes a read token for one board, copies it from the page (shown once), a script reads the
board with it; the list says it was just used; she revokes it and the script is refused."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.browser.helpers import signed_in_page
from tests.factories import a_board, users
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def script_reads(server: LiveServer, path: str, token: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        server.url + path, headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as refused:
        return refused.code, json.load(refused)


def test_alice_makes_uses_and_revokes_a_token(
    new_context: Callable[..., BrowserContext], live_server: LiveServer
) -> None:
    (alice,) = users("alice")
    board = a_board(owner=alice, name="Roadmap")
    a_board(owner=alice, name="Ops")
    page = signed_in_page(alice, new_context, live_server)
    page.goto("/")

    page.get_by_test_id("account-menu").locator("summary").click()
    page.get_by_role("link", name="Access tokens").click()
    expect(page.get_by_test_id("no-tokens")).to_be_visible()
    page.get_by_label("Name").fill("CI script")
    page.get_by_label("What it may do").select_option("read")
    page.get_by_label("Boards").select_option(label="Roadmap")
    page.get_by_label("Expires after").select_option("30d")
    page.get_by_role("button", name="Make token").click()

    token = page.get_by_test_id("token-plaintext").inner_text().strip()
    assert token.startswith("kb_")
    status, answer = script_reads(live_server, f"/api/v1/projects/{board.id}/", token)
    assert status == 200 and answer["name"] == "Roadmap"

    page.goto("/account/tokens")
    expect(page.get_by_test_id("token-plaintext")).to_have_count(0)
    row = page.get_by_test_id("token-row")
    expect(row).to_contain_text("CI script")
    expect(row).to_contain_text("Roadmap")
    expect(row.get_by_test_id("token-last-used")).to_have_text("just now")

    row.get_by_role("button", name="Revoke CI script").click()
    expect(page.get_by_test_id("token-revoked")).to_be_visible()
    expect(page.get_by_test_id("token-row")).to_have_count(0)
    status, answer = script_reads(live_server, f"/api/v1/projects/{board.id}/", token)
    assert status == 401 and answer["code"] == "unauthenticated"
