"""A board you cannot open, seen in a browser: the product's own 404 page, not Django's
debug listing of every URL pattern, and nothing that says the board exists; a member whose
role does not allow an action is told so on the product's 403 page. The live
workers run in development (DEBUG on), where Django's own pages would show."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from kanban.access.memberships import membership_set
from tests.browser.helpers import signed_in_page
from tests.factories import a_board, users
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_removed_member_who_reloads_gets_the_products_404_page(
    new_context: Callable[..., BrowserContext], live_server: LiveServer
) -> None:
    alice, carol = users("alice", "carol")
    board = a_board(owner=alice, name="Secret plans", members={carol: "developer"})
    page = signed_in_page(carol, new_context, live_server)
    page.goto(f"/boards/{board.id}/")
    expect(page.locator("#plugin-frame")).to_be_visible()

    membership_set(user=carol, project=board, role=None)
    response = page.reload()

    assert response is not None and response.status == 404
    expect(page.get_by_test_id("not-found")).to_be_visible()
    expect(page.locator("body")).not_to_contain_text("URLconf")
    expect(page.locator("body")).not_to_contain_text("Secret plans")
    expect(page.get_by_role("link", name="Back to your boards")).to_be_visible()


def test_a_guest_who_tries_to_archive_the_board_gets_the_products_403_page(
    new_context: Callable[..., BrowserContext], live_server: LiveServer
) -> None:
    alice, gus = users("alice", "gus")
    board = a_board(owner=alice, name="Shared", members={gus: "guest"})
    page = signed_in_page(gus, new_context, live_server)
    page.goto("/")
    # The dashboard offers a guest no Archive button; the form is sent as a page would.
    page.evaluate(
        """(path) => {
            const form = document.createElement("form");
            Object.assign(form, {method: "post", action: path});
            const token = document.querySelector("[name=csrfmiddlewaretoken]")?.value
                ?? document.cookie.match(/csrftoken=([^;]+)/)?.[1] ?? "";
            for (const [name, value] of [["archived", "true"], ["csrfmiddlewaretoken", token]]) {
                const input = Object.assign(document.createElement("input"), {name, value});
                form.append(Object.assign(input, {type: "hidden"}));
            }
            document.body.append(form);
            form.submit();
        }""",
        f"/boards/{board.id}/archive",
    )
    page.wait_for_load_state()

    expect(page.get_by_test_id("forbidden")).to_be_visible()
    expect(page.get_by_test_id("forbidden")).to_contain_text("needs the owner role")
    expect(page.locator("body")).not_to_contain_text("Traceback")
