"""What one change made elsewhere costs an open Board: bob changes the demo board in his
browser, kind by kind, through the Board's own actions (or, for the last kinds, as another
client would, through the SDK), while alice's Board shows it. Her page sends at most one
request per change, and none when the change carried its values.

The bench's simulated viewers (bench/viewers.py) are pinned here to send what this real
Board sends, kind by kind.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import expect

from bench.viewers import BoardViewer, open_viewer
from tests.browser.demo_board import Demo, FrameLog, Person, demo, open_board
from tests.live import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["demo", "open_board"]

#: How long a change may still cause reads after alice's page shows it.
SETTLE_MS = 400
#: A value past the push limit (16 KiB): its change only names the key.
BIG = "x" * 20_000

#: (what bob does, in his plugin frame (Person.act); what alice's Board shows once it arrived).
KINDS: dict[str, tuple[str, str]] = {
    "edit": (
        "actions.editCard('c1', board.findCard('c1'), {title: 'Edited elsewhere'})",
        "boardDebug.state.cards.find((c) => c.id === 'c1').title === 'Edited elsewhere'",
    ),
    "move": (
        "actions.moveCard('c2', 'done', null)",
        "boardDebug.state.cards.find((c) => c.id === 'c2').column === 'done'",
    ),
    "add": (
        "actions.createCard({title: 'Added elsewhere', description: '', assignees: [],"
        " labels: [], due: null, item: null, column: 'todo'})",
        "boardDebug.state.cards.some((c) => c.title === 'Added elsewhere')",
    ),
    "archive": (
        "actions.archiveCard('c3')",
        "boardDebug.state.cards.find((c) => c.id === 'c3').archived === true",
    ),
    "restore": (
        "actions.restoreCard('c3')",
        "boardDebug.state.cards.find((c) => c.id === 'c3').archived === false",
    ),
    "delete for good": (
        "actions.deleteForever('c5')",
        "!boardDebug.state.cards.some((c) => c.id === 'c5')",
    ),
    "column add": (
        "actions.saveColumns('Adding', changes.addColumn({id: 'review', title: 'Review', wip: 0}))",
        "boardDebug.state.columns.some((c) => c.id === 'review')",
    ),
    "column rename": (
        "actions.saveColumns('Renaming', changes.patchColumn('review', {title: 'In review'}))",
        "boardDebug.state.columns.some((c) => c.title === 'In review')",
    ),
    "column reorder": (
        "actions.moveColumn('review', 'todo')",
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
    bob.act(action)
    if action.startswith("actions.deleteForever"):
        bob.plugin.get_by_test_id("confirm-ok").click()


class SimulatedViewer:
    """The bench's Board viewer (bench/viewers.py) on its own event loop and thread,
    beside the real Board."""

    def __init__(self, server: LiveServer, demo: Demo) -> None:
        client = Client()
        client.force_login(demo.people["alice"])
        cookie = (
            f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
        )
        url = f"{server.url.replace('http', 'ws', 1)}/ws/boards/{demo.board.id}/"
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.viewer: BoardViewer = self._run(self._open(url, cookie, server.url))

    async def _open(self, url: str, cookie: str, origin: str) -> BoardViewer:
        viewer = await open_viewer(url, cookie, origin)
        await viewer.start()
        return viewer

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=30)

    def wait_for(self, key: str, predicate: Callable[[Any], bool]) -> None:
        deadline = time.monotonic() + 10
        while not predicate(self.viewer.values.get(key)):
            if time.monotonic() > deadline:
                raise AssertionError(f"the simulated viewer never saw {key} change")
            time.sleep(0.02)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.viewer.stop)
        self.loop.call_soon_threadsafe(self.loop.stop)


def reads_after(alice: Person, log: FrameLog, bob: Person, change: tuple[str, str]) -> Any:
    action, shown = change
    log.clear()
    do(bob, action)
    alice.wait_for(shown)
    alice.page.wait_for_timeout(SETTLE_MS)
    return log.reads()


def as_reads(frames: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    return [(f["op"], f["value"] if f["op"] == "getMany" else [f["key"]]) for f in frames]


@pytest.mark.long
def test_every_kind_of_change_elsewhere_costs_the_board_no_read_when_its_values_were_pushed(
    demo: Demo, open_board: Callable[..., Person], live_server: LiveServer
) -> None:
    """And the bench's simulated viewer sends exactly what the real Board sends, kind by
    kind, so the bench measures what Boards do."""
    log = FrameLog()
    alice = open_board("alice", route=log.route)
    bob = open_board("bob")
    simulated = SimulatedViewer(live_server, demo)
    try:
        for kind, change in [*KINDS.items(), ("card past the push limit", BIG_CARD)]:
            before = len(simulated.viewer.reads)
            reads = as_reads(reads_after(alice, log, bob, change))
            bob.wait_for("boardDebug.state.pending === 0")
            time.sleep(0.2)
            assert simulated.viewer.reads[before:] == reads, kind
            expected = [("getMany", ["card:c4"])] if change is BIG_CARD else []
            assert reads == expected, kind
    finally:
        simulated.close()
    expect(alice.plugin.get_by_test_id("card-c4")).to_contain_text("Big")
    assert json.loads(json.dumps(alice.state()["cards"]))
