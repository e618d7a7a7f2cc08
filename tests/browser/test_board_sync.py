"""What one change made elsewhere costs an open Board: bob changes the demo board in his
browser, kind by kind, through the Board's own actions (or, for the last kinds, as another
client would, through the SDK), while alice's Board shows it. Her page sends at most one
request per change, and none when the change carried its values.

The same kinds are what the bench's simulated viewers replay (bench/viewers.py); the last
test pins that they send what this real Board sends.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.boards import Demo, FrameLog, Person, demo, open_board

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo", "open_board"]

#: How long a change may still cause reads after alice's page shows it.
SETTLE_MS = 400
#: A value past the push limit (16 KiB): its change only names the key.
BIG = "x" * 20_000

#: (what bob does, in his plugin frame; what alice's Board shows once it arrived).
KINDS: dict[str, tuple[str, str]] = {
    "edit": (
        "BoardApp.editCard('c1', BoardApp.findCard('c1'), {title: 'Edited elsewhere'})",
        "boardDebug.state.cards.find((c) => c.id === 'c1').title === 'Edited elsewhere'",
    ),
    "move": (
        "BoardApp.moveCard('c2', 'done', null)",
        "boardDebug.state.cards.find((c) => c.id === 'c2').column === 'done'",
    ),
    "add": (
        "BoardApp.createCard({title: 'Added elsewhere', description: '', assignee: '',"
        " labels: [], due: null, item: null, column: 'todo'})",
        "boardDebug.state.cards.some((c) => c.title === 'Added elsewhere')",
    ),
    "archive": (
        "BoardApp.archiveCard('c3')",
        "boardDebug.state.cards.find((c) => c.id === 'c3').archived === true",
    ),
    "restore": (
        "BoardApp.restoreCard('c3')",
        "boardDebug.state.cards.find((c) => c.id === 'c3').archived === false",
    ),
    "delete for good": (
        "BoardApp.deleteForever('c5')",
        "!boardDebug.state.cards.some((c) => c.id === 'c5')",
    ),
    "column add": (
        "BoardApp.saveColumns('Adding', BoardCore.addColumn({id: 'review', title: 'Review',"
        " wip: 0}))",
        "boardDebug.state.columns.some((c) => c.id === 'review')",
    ),
    "column rename": (
        "BoardApp.saveColumns('Renaming', BoardCore.patchColumn('review', {title: 'In review'}))",
        "boardDebug.state.columns.some((c) => c.title === 'In review')",
    ),
    "column reorder": (
        "BoardApp.moveColumn('review', 'todo')",
        "boardDebug.state.columns[0].id === 'review'",
    ),
    "index rewritten by another client": (
        "steamHarnessKanban.kv.setValue('board:cards', ['c4', 'c3', 'c2', 'c1'])",
        "boardDebug.state.cards.length === 4 && !boardDebug.state.cards.some((c) => c.id === 'c5')",
    ),
}
#: A card written past the push limit by another client: named only, read once.
BIG_CARD = (
    "steamHarnessKanban.kv.getValue('card:c4').then((card) =>"
    f" steamHarnessKanban.kv.setValue('card:c4', {{...card, title: 'Big', padding: '{BIG}'}}))",
    "boardDebug.state.cards.find((c) => c.id === 'c4').title === 'Big'",
)


def do(bob: Person, action: str) -> None:
    bob.frame.evaluate(f"() => {{ {action}; }}")
    if action.startswith("BoardApp.deleteForever"):
        bob.plugin.get_by_test_id("confirm-ok").click()


def reads_after(alice: Person, log: FrameLog, bob: Person, change: tuple[str, str]) -> Any:
    action, shown = change
    log.clear()
    do(bob, action)
    alice.wait_for(shown)
    alice.page.wait_for_timeout(SETTLE_MS)
    return log.reads()


def test_every_kind_of_change_elsewhere_costs_the_board_no_read_when_its_values_were_pushed(
    demo: Demo, open_board: Callable[..., Person]
) -> None:
    log = FrameLog()
    alice = open_board("alice", route=log.route)
    bob = open_board("bob")
    for kind, change in KINDS.items():
        assert reads_after(alice, log, bob, change) == [], kind
        bob.wait_for("boardDebug.state.pending === 0")

    reads = reads_after(alice, log, bob, BIG_CARD)
    assert [(r["op"], r.get("value", r.get("key"))) for r in reads] == [("getMany", ["card:c4"])]
    assert json.loads(json.dumps(alice.state()["cards"]))  # still a board
    expect(alice.plugin.get_by_test_id("card-c4")).to_contain_text("Big")
