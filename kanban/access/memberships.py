"""Who belongs to which project, with which role."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from kanban.access.decision import Op, access_project_data
from kanban.access.events import publish_access_changed
from kanban.models import ROLE_RANK, Invite, Membership, Project, Role
from storage.errors import ErrorCode, KanbanError, invalid_argument


def check_role(role: object) -> Role | None:
    """A role name, or ``none`` / None for "no membership"."""
    if role is None or role == "none":
        return None
    if not isinstance(role, str) or role not in Role.values:
        choices = ", ".join([*Role.values, "none"])
        raise invalid_argument(f"role must be one of {choices}, not {role!r}", field="role")
    return Role(role)


def membership_set(*, user: AbstractBaseUser, project: Project, role: Role | str | None) -> bool:
    """Give ``user`` this role in ``project``; ``None`` (or ``"none"``) removes the
    membership. Returns whether anything changed; a change publishes access-changed."""
    new_role = check_role(role)
    with transaction.atomic():
        current = (
            Membership.objects.select_for_update().filter(user_id=user.pk, project=project).first()
        )
        if current is not None and current.role == Role.OWNER and new_role != Role.OWNER:
            # Links made as an owner end with the ownership: one removed or demoted by another
            # owner would otherwise come back as owner through a link of their own.
            Invite.objects.filter(project=project, created_by_id=user.pk, revoked_at=None).update(
                revoked_at=timezone.now()
            )
        if new_role is None:
            if current is None:
                return False
            current.delete()
        elif current is None:
            Membership.objects.create(user_id=user.pk, project=project, role=new_role)
        elif current.role != new_role:
            current.role = new_role
            current.save(update_fields=["role", "updated_at"])
        else:
            return False
        publish_access_changed(project_ids={project.id}, user_ids={user.pk})
    return True


def role_of(*, user: AbstractBaseUser, project: Project) -> Role | None:
    """The role the user acts with in the project (superusers act as owners of every
    project)."""
    if getattr(user, "is_superuser", False):
        return Role.OWNER
    return membership_role(user=user, project=project)


def membership_role(*, user: AbstractBaseUser, project: Project) -> Role | None:
    """The role the user's membership names, as the members list shows it (None: none)."""
    role = (
        Membership.objects.filter(user_id=user.pk, project=project)
        .values_list("role", flat=True)
        .first()
    )
    return None if role is None else Role(role)


# --- members managed by a project's owners ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Member:
    user_id: int
    username: str
    display_name: str
    role: Role


def access_project_role(*, user: Any, project_id: UUID, needed: Role, doing: str) -> Project:
    """The project, when ``user`` holds at least the ``needed`` role in it. A non-member
    learns nothing (``not_found``, as for any other project); a member below the role gets
    ``forbidden`` naming what ``doing`` needs."""
    access_project_data(user=user, consumer_id=project_id, alias=None, op=Op.GET, key=None)
    project = Project.objects.get(pk=project_id)
    role = role_of(user=user, project=project)
    if role is None or ROLE_RANK[role] < ROLE_RANK[needed]:
        raise KanbanError(ErrorCode.FORBIDDEN, f"{doing} needs the {needed} role")
    return project


def members_list(*, user: Any, project_id: UUID) -> list[Member]:
    """The project's active members by display name; every member may see them."""
    project = access_project_role(
        user=user, project_id=project_id, needed=Role.GUEST, doing="seeing the members"
    )
    return members_of(project=project)


def members_of(*, project: Project) -> list[Member]:
    return members_by_name(
        Membership.objects.filter(project=project, user__is_active=True).select_related("user")
    )


def members_by_name(memberships: Iterable[Membership]) -> list[Member]:
    """Members (their users loaded) by display name, then username."""
    found = [
        Member(
            user_id=membership.user.pk,
            username=membership.user.get_username(),
            display_name=display_name(membership.user),
            role=Role(membership.role),
        )
        for membership in memberships
    ]
    found.sort(key=lambda member: (member.display_name.casefold(), member.username))
    return found


def display_name(user: Any) -> str:
    return str(user.get_full_name()).strip() or str(user.get_username())
