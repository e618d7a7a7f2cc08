"""The channel-layer group a project's committed changes are published to: one name for
the bridge's hub, which publishes and follows it, and for MCP resource subscriptions, which
follow it too."""

from __future__ import annotations

from uuid import UUID

#: The layer message a group carries: ``{"type": CHANGED, "project", "changes": [[kind,
#: key, revision, value text, deleted, source], ...], ...}`` (``kanban.bridge.hub``).
CHANGED = "kv.changed"


def project_group(project_id: UUID) -> str:
    return f"kanban.kv.{project_id}"
