"""Creating, renaming and deleting projects."""

from __future__ import annotations

import functools
import unicodedata
from typing import Any, Final
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from kanban.access.events import publish_access_changed
from kanban.access.memberships import access_project_role
from kanban.access.project_writes import project_lock_for_delete
from kanban.models import DEFAULT_KANBAN_ENTRY, Project, ProjectType, Relationship, Role
from kanban.projects.attachment_files import attachment_files_erase
from storage.addresses import CONTROL
from storage.errors import invalid_argument
from storage.kv import kv_erase_project

MAX_NAME_LENGTH = 200


#: Characters that make a name display as something it is not: bidirectional overrides and
#: isolates (a name that reads backwards), besides control characters such as NUL.
_DECEPTIVE: Final = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


#: check_project_name as the OpenAPI schema states it: something besides spaces, none of
#: the characters refused below (surrogates never arrive in valid JSON text).
NAME_PATTERN: Final = "^[^{0}]*[^\\s{0}][^{0}]*$".format(CONTROL + "".join(sorted(_DECEPTIVE)))


def check_project_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise invalid_argument("name must be a non-empty string", field="name")
    if len(name) > MAX_NAME_LENGTH:
        raise invalid_argument(f"name is longer than {MAX_NAME_LENGTH} characters", field="name")
    if any(unicodedata.category(c) in ("Cc", "Cs") or c in _DECEPTIVE for c in name):
        raise invalid_argument(
            "name must not contain control characters, unpaired surrogates or "
            "bidirectional overrides",
            field="name",
        )
    return name


def check_project_type(type: object) -> ProjectType:
    if not isinstance(type, str) or type not in ProjectType.values:
        choices = ", ".join(ProjectType.values)
        raise invalid_argument(f"type must be one of {choices}, not {type!r}", field="type")
    return ProjectType(type)


def project_create(
    *,
    name: str,
    type: str = ProjectType.KANBAN,
    project_id: UUID | None = None,
    kanban_entry: str = DEFAULT_KANBAN_ENTRY,
) -> Project:
    """A new project with no members and no declarations; nobody's access changes."""
    name, project_type = check_project_name(name), check_project_type(type)
    project = Project(name=name, type=project_type, kanban_entry=kanban_entry)
    if project_id is not None:
        project.id = project_id
    project.save(force_insert=True)
    return project


def project_update(*, project: Project, name: str, type: str) -> Project:
    project.name, project.type = check_project_name(name), check_project_type(type)
    project.save(update_fields=["name", "type", "updated_at"])
    return project


def project_archive(*, actor: Any, project_id: UUID, archived: bool) -> Project:
    """An owner archives the project (it leaves everyone's dashboard; nothing else changes:
    members, data and open boards keep working) or restores it."""
    if not isinstance(archived, bool):
        raise invalid_argument("archived must be true or false", field="archived")
    project = access_project_role(
        user=actor, project_id=project_id, needed=Role.OWNER, doing="archiving a board"
    )
    if (project.archived_at is not None) != archived:
        project.archived_at = timezone.now() if archived else None
        project.save(update_fields=["archived_at", "updated_at"])
    return project


def project_delete_by_owner(*, actor: Any, project_id: UUID) -> None:
    """An owner deletes the project for good: everything ``project_delete`` removes goes,
    and its open boards close (4403) as their sockets re-check."""
    project = access_project_role(
        user=actor, project_id=project_id, needed=Role.OWNER, doing="deleting a board"
    )
    project_delete(project=project)


def project_delete(*, project: Project) -> None:
    """Delete the project with its memberships, declarations, plugin files and all its
    data (KV, PersistentValue, Knowledge), in one transaction, and its attachments' files
    once that commits: a project re-created or re-imported under the same UUID inherits
    nothing. Writes racing it either commit first, and are erased, or are refused after
    (``kanban.access.project_writes``). Declarations of other projects that name it stay,
    and become "target unknown"."""
    with transaction.atomic():
        project_id = project.id  # delete() forgets it
        project_lock_for_delete(project_id=project_id)  # no write lands after the erase
        kv_erase_project(project_id=project.id)
        affected = {project.id}
        affected.update(project.relationships.values_list("related_project_id", flat=True))
        affected.update(
            Relationship.objects.filter(related_project_id=project.id).values_list(
                "project_id", flat=True
            )
        )
        members = set(project.memberships.values_list("user_id", flat=True))
        project.delete()
        publish_access_changed(project_ids=affected, user_ids=members)
        # After the commit: a rolled-back deletion keeps its files.
        transaction.on_commit(functools.partial(attachment_files_erase, project_id=project_id))
