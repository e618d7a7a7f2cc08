"""What a user's dashboard (and ``GET /api/v1/projects/``) lists: the projects they belong
to, with their role, the members, and when and by whom each last changed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any
from uuid import UUID

from django.contrib.auth import get_user_model

from kanban.access.memberships import (
    Member,
    access_project_role,
    display_name,
    members_by_name,
)
from kanban.models import Membership, Project, ProjectType, Role
from storage.addresses import check_text
from storage.errors import invalid_argument
from storage.kv import kv_latest_write

MAX_QUERY_LENGTH = 200


class Sort(StrEnum):
    NAME = "name"
    CHANGED = "changed"


@dataclass(frozen=True, slots=True)
class LastChange:
    at: datetime
    #: Who wrote it, as the write source names them (None: a write with no user, such as a
    #: command-line import); ``by`` is their display name now, or the stored username.
    username: str | None
    by: str | None


@dataclass(frozen=True, slots=True)
class Listed:
    project: Project
    role: Role
    members: list[Member]
    last_change: LastChange | None


def check_sort(sort: object) -> Sort:
    if sort is None:
        return Sort.NAME
    if not isinstance(sort, str) or sort not in Sort.__members__.values():
        choices = ", ".join(Sort)
        raise invalid_argument(f"sort must be one of {choices}, not {sort!r}", field="sort")
    return Sort(sort)


def check_query(query: object) -> str:
    if query is None:
        return ""
    if not isinstance(query, str) or len(query) > MAX_QUERY_LENGTH:
        raise invalid_argument(
            f"the search is text of at most {MAX_QUERY_LENGTH} characters", field="q"
        )
    # NUL reaches PostgreSQL in the name filter, which refuses it as a fault of its own.
    return check_text(query, field="q", allow_empty=True, max_length=MAX_QUERY_LENGTH).strip()


def projects_listed(
    *,
    user: Any,
    query: object = "",
    sort: object = Sort.NAME,
    archived: bool = False,
    kanban_only: bool = False,
) -> list[Listed]:
    """The projects ``user`` is a member of (a superuser: every project, as owner), archived
    ones only when ``archived``, whose name contains ``query`` (any case), by name or by
    last change (newest first, never-changed last)."""
    text, order = check_query(query), check_sort(sort)
    projects = Project.objects.filter(archived_at__isnull=not archived)
    if kanban_only:
        projects = projects.filter(type=ProjectType.KANBAN)
    if text:
        projects = projects.filter(name__icontains=text)
    superuser = bool(getattr(user, "is_superuser", False))
    if not superuser:
        projects = projects.filter(memberships__user_id=user.pk)
    listed = _listed(user, list(projects.order_by("name", "id").distinct()))
    if order == Sort.CHANGED:
        listed.sort(key=lambda item: -item.last_change.at.timestamp() if item.last_change else 0.0)
    return listed


def project_listed(*, user: Any, project_id: UUID) -> Listed:
    """One project as ``projects_listed`` shows it, for any member of it."""
    project = access_project_role(
        user=user, project_id=project_id, needed=Role.GUEST, doing="seeing the project"
    )
    return _listed(user, [project])[0]


def _listed(user: Any, found: list[Project]) -> list[Listed]:
    superuser = bool(getattr(user, "is_superuser", False))
    memberships: dict[Any, list[Membership]] = {project.id: [] for project in found}
    for membership in Membership.objects.filter(
        project__in=found, user__is_active=True
    ).select_related("user"):
        memberships[membership.project_id].append(membership)
    members = {project_id: members_by_name(rows) for project_id, rows in memberships.items()}
    roles = {
        project_id: Role(row.role)
        for project_id, rows in memberships.items()
        for row in rows
        if row.user_id == user.pk
    }
    changes = _last_changes([project.id for project in found])
    return [
        Listed(
            project=project,
            role=Role.OWNER if superuser else roles[project.id],
            members=members[project.id],
            last_change=changes.get(project.id),
        )
        for project in found
    ]


def _last_changes(project_ids: list[Any]) -> dict[Any, LastChange]:
    writes = {project_id: kv_latest_write(project_id=project_id) for project_id in project_ids}
    user_ids = {
        write.source.get("userId")
        for write in writes.values()
        if write is not None and write.source is not None
    }
    names = {
        user.pk: display_name(user)
        for user in get_user_model().objects.filter(pk__in=[i for i in user_ids if i is not None])
    }
    changes = {}
    for project_id, write in writes.items():
        if write is None:
            continue
        source = write.source or {}
        username = source.get("user")
        user_id = source.get("userId")
        by = names.get(user_id, username) if isinstance(user_id, int) else username
        changes[project_id] = LastChange(at=write.written_at, username=username, by=by)
    return changes
