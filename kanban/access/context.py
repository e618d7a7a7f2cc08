"""What a plugin is told about who uses it and what they may do: the SDK's ``getContext()``.

Never more than the user could learn by trying: the role they hold in this project, and for
each alias the project declares whether the relationship is confirmed and which kinds of
access its grant opens to them at all (never the grant's prefixes, nor anything about the
related project beyond what a refusal would say). Each value is the access decision's own
verdict (``access_project_data``), so the context cannot disagree with what a call would do.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from kanban.access.decision import Op, access_project_data
from kanban.access.memberships import display_name, members_of, membership_role
from kanban.access.relationships import declarations_of
from kanban.models import Project
from storage.errors import ErrorCode, KanbanError

#: The SDK's names for what a related project's grant lets this user do, by operation.
_RELATED_CAN = {
    "read": Op.GET,
    "write": Op.SET,
    "knowledgeRead": Op.KNOWLEDGE_READ,
    "knowledgeWrite": Op.KNOWLEDGE_WRITE,
}


def plugin_context(*, user: Any, project_id: UUID) -> dict[str, Any]:
    """``{user: {id, username, displayName}, role, staff, can: {read, write}, members: [{id,
    username, displayName, role}], related: {alias: {status: "confirmed" | "pending", can:
    {read, write, knowledgeRead, knowledgeWrite}}}}``. ``role`` is the user's membership
    (null for an administrator who holds none: ``staff`` says they may act as an owner
    anyway), as the members list shows it. ``members`` are the project's (whom a card can
    be assigned to), by display name; every member may see them.

    Raises what ``access_project_data`` raises when the user may not open the project."""
    access_project_data(user=user, consumer_id=project_id, alias=None, op=Op.GET, key=None)
    project = Project.objects.get(pk=project_id)
    role = membership_role(user=user, project=project)
    members = [
        {
            "id": member.user_id,
            "username": member.username,
            "displayName": member.display_name,
            "role": str(member.role),
        }
        for member in members_of(project=project)
    ]
    return {
        "user": _person(user),
        "role": None if role is None else str(role),
        "staff": bool(getattr(user, "is_superuser", False)),
        "can": {"read": True, "write": _allowed(user, project_id, None, Op.SET)},
        "members": members,
        "related": {
            declaration.alias: _related(user, project_id, declaration.alias)
            for declaration in declarations_of(project)
        },
    }


def _person(user: Any) -> dict[str, Any]:
    return {"id": user.pk, "username": user.get_username(), "displayName": display_name(user)}


def _related(user: Any, project_id: UUID, alias: str) -> dict[str, Any]:
    try:
        access_project_data(user=user, consumer_id=project_id, alias=alias, op=Op.GET, key=None)
    except KanbanError as error:
        if error.code == ErrorCode.RELATIONSHIP_PENDING:
            return {"status": "pending", "can": dict.fromkeys(_RELATED_CAN, False)}
        if error.code != ErrorCode.FORBIDDEN:
            raise
    can = {name: _allowed(user, project_id, alias, op) for name, op in _RELATED_CAN.items()}
    return {"status": "confirmed", "can": can}


def _allowed(user: Any, project_id: UUID, alias: str | None, op: Op) -> bool:
    try:
        access_project_data(user=user, consumer_id=project_id, alias=alias, op=op, key=None)
    except KanbanError as error:
        if error.code != ErrorCode.FORBIDDEN:
            raise
        return False
    return True
