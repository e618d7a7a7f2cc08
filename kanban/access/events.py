"""Access-changed events: sent once a change of declarations or memberships commits.

Whoever holds on to an access decision (the bridge's live subscriptions) listens to
``ACCESS_CHANGED`` and re-checks the projects and users named. Sent through
``storage.events.Topic``, so a rolled-back change sends nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from uuid import UUID

from storage.events import Topic


@dataclass(frozen=True, slots=True)
class AccessChanged:
    """Access to or from these projects, or of these users, may have changed."""

    project_ids: frozenset[UUID]
    user_ids: frozenset[int]


ACCESS_CHANGED: Topic[AccessChanged] = Topic("access")


def publish_access_changed(
    *,
    project_ids: Iterable[UUID] = (),
    user_ids: Iterable[int] = (),
    using: str | None = None,
) -> None:
    """Announce, once the current transaction commits, that access may have changed."""
    event = AccessChanged(project_ids=frozenset(project_ids), user_ids=frozenset(user_ids))
    if event.project_ids or event.user_ids:
        ACCESS_CHANGED.send_on_commit(event, using=using)
