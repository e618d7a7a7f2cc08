"""Boards: the kanban projects a user can open, and their plugin files."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db.models import QuerySet

from kanban.access.decision import Op, access_project_data
from kanban.models import PluginFile, Project
from kanban.projects.plugin_files import plugin_file_read
from storage.errors import ErrorCode, KanbanError

__all__ = ["access_board", "boards_for_user", "plugin_file_for_page"]


def access_board(*, user: Any, project_id: UUID) -> Project:
    """A board the user may open: a kanban project where they are at least a guest."""
    access_project_data(user=user, consumer_id=project_id, alias=None, op=Op.GET, key=None)
    project = Project.objects.filter(pk=project_id, type="kanban").first()
    if project is None:
        raise KanbanError(ErrorCode.NOT_FOUND, "no such board")
    return project


def boards_for_user(*, user: Any) -> QuerySet[Project]:
    boards = Project.objects.filter(type="kanban").order_by("name", "id")
    if getattr(user, "is_superuser", False):
        return boards
    return boards.filter(memberships__user=user).distinct()


def plugin_file_for_page(*, project_id: UUID, path: str) -> PluginFile:
    """A plugin file of a kanban project. Plugin code is served by project UUID without a
    session: requests from the sandboxed (opaque-origin) frame carry no cookies, and the
    plugin's data stays behind the bridge, which checks the user on every call."""
    project = Project.objects.filter(pk=project_id, type="kanban").only("id").first()
    if project is None:
        raise KanbanError(ErrorCode.NOT_FOUND, "no such board")
    return plugin_file_read(project_id=project_id, path=path)
