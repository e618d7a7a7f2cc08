"""Change events, published only after the writing transaction commits.

The engine registers ``publish`` with ``transaction.on_commit``; a rolled-back write
publishes nothing. Upper layers (the KV service, the bridge fan-out) add listeners.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Change:
    kind: Literal["value", "list"]
    namespace: str
    key: str
    seq: int
    deleted: bool


Listener = Callable[[Sequence[Change]], None]
_listeners: list[Listener] = []


def add_listener(listener: Listener) -> Callable[[], None]:
    """Register a listener for committed changes; returns a function that removes it."""
    _listeners.append(listener)

    def remove() -> None:
        if listener in _listeners:
            _listeners.remove(listener)

    return remove


def publish(changes: Sequence[Change]) -> None:
    # A failing listener must not keep the others from hearing about a committed write.
    for listener in tuple(_listeners):
        try:
            listener(changes)
        except Exception:
            logger.exception("storage change listener %r failed", listener)
