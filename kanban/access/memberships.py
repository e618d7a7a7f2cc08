"""Who belongs to which project, with which role."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from kanban.access.events import publish_access_changed
from kanban.models import Membership, Project, Role
from storage.errors import invalid_argument


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
    """The user's role in the project (superusers act as owners of every project)."""
    if getattr(user, "is_superuser", False):
        return Role.OWNER
    role = (
        Membership.objects.filter(user_id=user.pk, project=project)
        .values_list("role", flat=True)
        .first()
    )
    return None if role is None else Role(role)
