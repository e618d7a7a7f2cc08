"""Plugin-changed events: published after a re-import that changed a board's plugin files
commits, so that open boards load the new files. A rolled-back import publishes nothing,
because delivery is registered with ``transaction.on_commit``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from uuid import UUID

from django.db import transaction

logger = logging.getLogger(__name__)

#: ``listener(project_id, version)``; ``version`` is ``kanban.packages.plugin_versions``'.
PluginListener = Callable[[UUID, str], None]
_listeners: list[PluginListener] = []


def add_plugin_listener(listener: PluginListener) -> Callable[[], None]:
    """Register a listener for committed plugin changes; returns a function removing it."""
    _listeners.append(listener)

    def remove() -> None:
        if listener in _listeners:
            _listeners.remove(listener)

    return remove


def publish_plugin_changed(*, project_id: UUID, version: str, using: str | None = None) -> None:
    """Announce, once the current transaction commits, that the plugin's files changed."""
    transaction.on_commit(lambda: _deliver(project_id, version), using=using)


def _deliver(project_id: UUID, version: str) -> None:
    for listener in tuple(_listeners):
        try:
            listener(project_id, version)
        except Exception:
            logger.exception("plugin listener %r failed", listener)
