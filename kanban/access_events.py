"""Access-changed events: published after a change of declarations or memberships commits.

Whoever holds on to an access decision (the bridge's live subscriptions) listens here and
re-checks the projects and users named. A rolled-back change publishes nothing, because
delivery is registered with ``transaction.on_commit``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from uuid import UUID

from django.db import transaction

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AccessChanged:
    """Access to or from these projects, or of these users, may have changed."""

    project_ids: frozenset[UUID]
    user_ids: frozenset[int]


AccessListener = Callable[[AccessChanged], None]
_listeners: list[AccessListener] = []


def add_access_listener(listener: AccessListener) -> Callable[[], None]:
    """Register a listener for committed access changes; returns a function removing it."""
    _listeners.append(listener)

    def remove() -> None:
        if listener in _listeners:
            _listeners.remove(listener)

    return remove


def publish_access_changed(
    *,
    project_ids: Iterable[UUID] = (),
    user_ids: Iterable[int] = (),
    using: str | None = None,
) -> None:
    """Announce, once the current transaction commits, that access may have changed."""
    event = AccessChanged(project_ids=frozenset(project_ids), user_ids=frozenset(user_ids))
    if not event.project_ids and not event.user_ids:
        return
    transaction.on_commit(lambda: _deliver(event), using=using)


def _deliver(event: AccessChanged) -> None:
    # A failing listener must not keep the others from hearing about a committed change.
    for listener in tuple(_listeners):
        try:
            listener(event)
        except Exception:
            logger.exception("access listener %r failed", listener)
