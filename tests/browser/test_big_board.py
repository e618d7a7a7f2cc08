"""Two people on a 5,000-card Board: what one does, the other sees, and each page holds only
the cards near what it shows (a few hundred nodes, not 5,000), whatever they do: add, move,
edit and archive, move cards by keyboard past what was drawn, drag from far down a column,
and filter. The times these take are the bench's (U7-U9, bench/browser_bench.py), not here.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from kanban.data.demo import board_fill
from tests.browser.demo_board import Demo, Person, demo, open_board

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo", "open_board"]

CARDS = 5000
#: Card nodes a page may hold for 5,000 cards: three columns' windows and their margins.
MOST_NODES = 400


#: A column's open cards in board order, from the page's model (not its DOM, which holds
#: only the window).
ORDER_JS = """(column) => boardDebug.state.cards
  .filter((c) => c.column === column && !c.archived)
  .sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : a.id < b.id ? -1 : 1))
  .map((c) => c.id)"""


def card_nodes(person: Person) -> int:
    return int(person.frame.evaluate("document.querySelectorAll('[data-card-id]').length"))


def top_card(person: Person, column: str) -> str:
    """The id of the first card of ``column`` this page draws."""
    return str(
        person.frame.evaluate(
            "(column) => document.querySelector(`[data-list-for='${column}'] [data-card-id]`)"
            ".dataset.cardId",
            column,
        )
    )


@pytest.fixture
def big_board(demo: Demo) -> Demo:
    board_fill(project_id=demo.board.id, cards=CARDS, user=User.objects.get(username="alice"))
    return demo


@pytest.mark.slow
def test_two_people_on_a_5000_card_board_see_each_others_changes_with_few_nodes(
    big_board: Demo, open_board: Callable[..., Person]
) -> None:
    alice = open_board("alice")
    bob = open_board("bob")
    for person in (alice, bob):
        person.wait_for(f"boardDebug.state.cards.length === {CARDS}", timeout=30)
        assert 30 <= card_nodes(person) <= MOST_NODES, card_nodes(person)

    # A card added in place lands at the end of its column: bob's page has it at once, and
    # draws it when he scrolls there.
    alice.plugin.get_by_test_id("add-card-todo").click()
    alice.plugin.get_by_test_id("quick-add-todo").fill("Call the printer")
    alice.plugin.get_by_test_id("quick-add-todo").press("Enter")
    bob.wait_for("boardDebug.state.cards.some((c) => c.title === 'Call the printer')")
    bob.frame.evaluate(
        "() => { const l = document.querySelector(\"[data-list-for='todo']\");"
        " l.scrollTop = l.scrollHeight; }"
    )
    expect(bob.plugin.get_by_text("Call the printer")).to_be_visible()
    assert card_nodes(bob) <= MOST_NODES

    # Moved, edited and archived at the top of a column: each shows on bob's board.
    moved = top_card(alice, "todo")
    alice.act(f"actions.moveCard('{moved}', 'done', '{top_card(alice, 'done')}')")
    expect(bob.plugin.get_by_test_id("column-done").get_by_test_id(f"card-{moved}")).to_be_visible()
    alice.act(f"actions.editCard('{moved}', board.findCard('{moved}'), {{title: 'Renamed'}})")
    expect(bob.plugin.get_by_test_id(f"card-{moved}")).to_contain_text("Renamed")
    alice.act(f"actions.archiveCard('{moved}')")
    expect(bob.plugin.get_by_test_id(f"card-{moved}")).to_have_count(0)
    assert card_nodes(bob) <= MOST_NODES


def test_keyboard_and_drag_reach_cards_past_what_was_drawn(
    big_board: Demo, open_board: Callable[..., Person]
) -> None:
    alice = open_board("alice")
    alice.wait_for(f"boardDebug.state.cards.length === {CARDS}", timeout=30)
    first = top_card(alice, "doing")
    drawn = alice.frame.evaluate(
        "document.querySelectorAll(\"[data-list-for='doing'] [data-card-id]\").length"
    )

    # Down, card by card, well past the cards first drawn: the focus never falls off.
    alice.plugin.get_by_test_id(f"card-{first}").focus()
    for _ in range(drawn + 20):
        alice.page.keyboard.press("ArrowDown")
    focused = alice.frame.evaluate("document.activeElement.dataset.cardId")
    order = alice.frame.evaluate(ORDER_JS, "doing")
    assert focused == order[drawn + 20], "the focus walked the column in order"

    # That card moves to the next column by keyboard, from deep in its own.
    alice.page.keyboard.press("Alt+ArrowRight")
    alice.wait_for(f"boardDebug.state.cards.find((c) => c.id === '{focused}').column === 'done'")

    # Far down a column, a card is dragged onto the top of another.
    alice.frame.evaluate(
        "() => { const l = document.querySelector(\"[data-list-for='todo']\");"
        " l.scrollTop = l.scrollHeight / 2; }"
    )
    alice.page.wait_for_timeout(200)
    deep = alice.frame.evaluate(
        "() => { const l = document.querySelector(\"[data-list-for='todo']\");"
        " const box = l.getBoundingClientRect();"
        " return [...l.querySelectorAll('[data-card-id]')].find((n) => {"
        " const r = n.getBoundingClientRect(); return r.top >= box.top && r.bottom <= box.bottom;"
        " }).dataset.cardId; }"
    )
    alice.frame.evaluate("document.querySelector(\"[data-list-for='doing']\").scrollTop = 0")
    alice.page.wait_for_timeout(200)
    target = top_card(alice, "doing")
    alice.plugin.get_by_test_id(f"card-{deep}").drag_to(
        alice.plugin.get_by_test_id(f"card-{target}")
    )
    alice.wait_for(f"boardDebug.state.cards.find((c) => c.id === '{deep}').column === 'doing'")
    order = alice.frame.evaluate(ORDER_JS, "doing")
    assert order[:2] == [deep, target], "dropped above the card it was dropped on"
    assert card_nodes(alice) <= MOST_NODES


def test_a_filter_on_a_5000_card_board_draws_what_matches_and_clearing_it_windows_again(
    big_board: Demo, open_board: Callable[..., Person]
) -> None:
    bob = open_board("bob")
    bob.wait_for(f"boardDebug.state.cards.length === {CARDS}", timeout=30)
    bob.plugin.get_by_test_id("filter-input").fill("Generated card 4321")
    expect(bob.plugin.get_by_test_id("card-title")).to_have_text(["Generated card 4321"])
    bob.plugin.get_by_test_id("filter-input").fill("")
    expect(bob.plugin.get_by_test_id("card-title").first).to_be_visible()
    assert 30 <= card_nodes(bob) <= MOST_NODES
