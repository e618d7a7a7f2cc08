"""Plugin-changed events: sent once a re-import that changed a board's plugin files commits,
so that open boards load the new files. Sent through ``storage.events.Topic``, so a
rolled-back import sends nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from storage.events import Topic


@dataclass(frozen=True, slots=True)
class PluginChanged:
    project_id: UUID
    #: ``kanban.projects.plugin_files.plugin_versions``' version of the new files.
    version: str


PLUGIN_CHANGED: Topic[PluginChanged] = Topic("plugin")


def publish_plugin_changed(*, project_id: UUID, version: str, using: str | None = None) -> None:
    """Announce, once the current transaction commits, that the plugin's files changed."""
    PLUGIN_CHANGED.send_on_commit(PluginChanged(project_id, version), using=using)
