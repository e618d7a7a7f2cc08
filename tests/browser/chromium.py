"""Which Chromium the browser tests drive, and how it shares this thread with asyncio."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = Path(os.environ.get("KANBAN_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
VIEWPORT = {"width": 1280, "height": 800}


def browser_unavailable(reason: str) -> NoReturn:
    if os.environ.get("KANBAN_REQUIRE_BROWSER") == "1":
        pytest.fail(f"KANBAN_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(f"{reason} (set KANBAN_REQUIRE_BROWSER=1 to fail instead)")


@dataclass(frozen=True)
class Chromium:
    """The run's browser and the event loop of the Playwright sync API driving it.

    That API marks its loop as running in this thread whenever it is in use. Django then
    refuses ORM calls as "from an async context" and pytest-asyncio cannot start a loop,
    although nothing runs concurrently: the loop only turns while a Playwright call
    blocks. So the mark is set only while a browser test runs (see ``lend``).
    """

    browser: Browser
    loop: asyncio.AbstractEventLoop

    @classmethod
    def launched(cls, browser: Browser) -> Chromium:
        loop = asyncio.get_running_loop()
        asyncio._set_running_loop(None)
        return cls(browser, loop)

    def lend(self) -> None:
        asyncio._set_running_loop(self.loop)

    def take_back(self) -> None:
        asyncio._set_running_loop(None)
