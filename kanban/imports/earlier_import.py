"""The board an earlier import of the same file made. Each importer (a board archive, a
Trello export) leaves a marker naming the board it made; importing that file again updates
that board instead of making another, and only one of its owners may do it."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from kanban.access.memberships import role_of
from kanban.models import Project, Role
from kanban.projects.package_changes import package_name
from storage import engine
from storage.errors import ErrorCode, KanbanError


def board_of_earlier_import(
    *, actor: Any, marker: engine.StoredValue | None, what: str, package: str | None = None
) -> Project | None:
    """The board the marker names, when it is still there (and, with ``package``, still
    that package: a project imported since as another plugin is no board to update).
    ``forbidden`` when ``actor`` is not one of its owners; ``what`` names the file's board
    in that message."""
    if marker is None or not isinstance(marker.value, dict):
        return None
    try:
        project_id = UUID(str(marker.value.get("projectId")))
    except ValueError:
        return None
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return None
    if package is not None and package_name(project.package_json) != package:
        return None
    if role_of(user=actor, project=project) != Role.OWNER:
        raise KanbanError(
            ErrorCode.FORBIDDEN,
            f"this {what} was imported before, into a board you do not own: ask one of its "
            "owners to import it again",
        )
    return project
