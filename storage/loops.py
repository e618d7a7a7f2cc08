"""One of a thing per running event loop: a worker's hub, its MCP watcher, its quota client.

What such a thing holds (tasks, locks, futures, connections) belongs to the loop that made
it and cannot serve another. Keyed weakly by the loop, it goes when its loop goes: a test's
loop that ends takes its own along, and the next loop makes a new one."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

_T = TypeVar("_T")


class PerLoop(Generic[_T]):
    """``get()`` is the running loop's ``make()``, made on its first use there."""

    def __init__(self, make: Callable[[], _T]) -> None:
        self._make = make
        self._made: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _T] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> _T:
        loop = asyncio.get_running_loop()
        made = self._made.get(loop)
        if made is None:
            made = self._made[loop] = self._make()
        return made

    def of(self, loop: asyncio.AbstractEventLoop) -> _T | None:
        """``loop``'s, if made yet, read from any thread: it makes none."""
        return self._made.get(loop)

    def forget(self) -> None:
        """Drop the running loop's, so that its next ``get()`` makes a new one."""
        self._made.pop(asyncio.get_running_loop(), None)
