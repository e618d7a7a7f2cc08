"""Events sent once the writing transaction commits: the project's one way to announce that
something changed, in the spirit of Zulip's ``send_event_on_commit``.

A ``Topic`` is one kind of event and its listeners. ``send_on_commit`` hands the event to
Django's ``transaction.on_commit``: inside a transaction the listeners hear it after the
outermost commit and never on rollback; outside one (a write that committed on its own)
they hear it at once. Storage's committed writes (``CHANGES``) are one topic; the access
and plugin events of ``kanban`` are others, built the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from django.db import transaction

logger = logging.getLogger(__name__)

E = TypeVar("E")


class Topic(Generic[E]):
    """One kind of event: listeners register here, senders send here."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._listeners: list[Callable[[E], None]] = []

    def listen(self, listener: Callable[[E], None]) -> Callable[[], None]:
        """Register a listener for committed events; returns a function that removes it."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def send_on_commit(self, event: E, *, using: str | None = None) -> None:
        transaction.on_commit(lambda: self._deliver(event), using=using)

    def _deliver(self, event: E) -> None:
        # A failing listener must not keep the others from hearing about a committed change.
        for listener in tuple(self._listeners):
            try:
                listener(event)
            except Exception:
                logger.exception("%s listener %r failed", self.name, listener)


@dataclass(frozen=True, slots=True)
class Change:
    kind: Literal["value", "list"]
    namespace: str
    key: str
    seq: int
    deleted: bool
    #: A set value's new JSON text, as stored (None for deletes and lists): listeners can
    #: pass a small value on without reading it back.
    text: str | None = None
    #: A value write's source as stored (JSON text; None when it named none): listeners can
    #: say who made the change without reading the key's history.
    source: str | None = None


#: Storage's committed writes, one event per transaction: its changes in commit order.
CHANGES: Topic[Sequence[Change]] = Topic("storage change")
