"""Who is on a board, as its people change it: an owner offers the board to a person by
username, changes a member's role or removes one; any member leaves; the person offered it
accepts or declines in their inbox.

Adding by username only *offers* (``MembershipOffer``): it grants nothing, so nobody is put
on a board, or reached through its notifications, without saying yes. An owner learns from
these answers nothing about which usernames exist: a username nobody holds is "offered" and
"not a member" like anyone's. Operators (Django admin, ``manage.py membership``) and invite
links, which the person opens themselves, still set memberships at once
(``kanban.access.memberships.membership_set``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final
from uuid import UUID

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from kanban.access.memberships import (
    access_project_role,
    check_role,
    display_name,
    membership_set,
    role_of,
)
from kanban.data.notifications import NOTIFIED, Notified
from kanban.models import ROLE_RANK, Membership, MembershipOffer, Project, Role
from storage.addresses import PLAIN_TEXT
from storage.errors import ErrorCode, KanbanError, invalid_argument

#: The newest offers a person's inbox lists (each is one board; a board is offered once).
MAX_OFFERS_LISTED: Final = 100
#: Row ids are 64-bit: a larger number names none (and a database would refuse it).
MAX_ID: Final = 2**63 - 1
#: How long a board declined may not offer itself to the same person again (its owners get
#: the usual answer; nothing reaches the person). An invite link still works meanwhile.
DECLINED_FOR: Final = timedelta(days=30)


@dataclass(frozen=True, slots=True)
class MemberChange:
    #: A membership was created, changed or removed (or an offer withdrawn).
    changed: bool
    #: The person was offered the role: they are on the board once they accept.
    offered: bool = False


@dataclass(frozen=True, slots=True)
class PendingOffer:
    """An offer as the board's owners see it."""

    username: str
    display_name: str
    role: Role
    offered_by: str
    created_at: datetime


def check_username(username: object) -> str:
    if not isinstance(username, str) or not username:
        raise invalid_argument("username must be a non-empty string", field="username")
    if not PLAIN_TEXT.fullmatch(username):
        # No username holds one (kanban.accounts.users.check_username), and PostgreSQL
        # would refuse a NUL in the lookup itself: a bad request, not a server fault.
        raise invalid_argument("a username has no control characters", field="username")
    return username


def member_set(*, actor: Any, project_id: UUID, username: object, role: object) -> MemberChange:
    """An owner changes the role of the member named ``username``, removes them (``role``
    None or ``"none"``), or offers the board to a person who is not on it yet; any member
    removes themselves (leaves). A membership's change publishes access-changed, so the
    person's open boards re-check at once; an offer's reaches their inbox.

    Raises ``not_found`` to a non-member, ``forbidden`` to a member who is not an owner
    (but leaves), and ``conflict`` when the change would leave the board without an owner."""
    new_role = check_role(role)
    name = check_username(username)
    project = access_project_role(
        user=actor, project_id=project_id, needed=Role.GUEST, doing="seeing the members"
    )
    person = get_user_model().objects.filter(username__iexact=name, is_active=True).first()
    leaving = person is not None and person.pk == actor.pk and new_role is None
    if not leaving and role_of(user=actor, project=project) != Role.OWNER:
        raise KanbanError(ErrorCode.FORBIDDEN, "managing members needs the owner role")
    if person is None:
        # The same answers as for a person who is not on the board, and nothing stored.
        return MemberChange(changed=False, offered=new_role is not None)
    with transaction.atomic():
        owners = list(
            Membership.objects.select_for_update()
            .filter(project=project, role=Role.OWNER)
            .values_list("user_id", flat=True)
        )
        current = Membership.objects.filter(project=project, user=person).first()
        if current is None and new_role is not None:
            _offer(project=project, person=person, role=new_role, actor=actor)
            return MemberChange(changed=False, offered=True)
        if current is None:
            return MemberChange(changed=_withdraw(project=project, person=person))
        if owners == [person.pk] and new_role != Role.OWNER:
            message = (
                "you are this board's last owner: make someone else its owner before you "
                "leave, or delete the board"
                if leaving
                else "a board needs an owner: make someone else its owner first"
            )
            raise KanbanError(ErrorCode.CONFLICT, message, field="role")
        return MemberChange(changed=membership_set(user=person, project=project, role=new_role))


def member_leave(*, actor: Any, project_id: UUID) -> bool:
    """``actor`` leaves the board (whatever their role, but not as its last owner)."""
    return member_set(
        actor=actor, project_id=project_id, username=actor.get_username(), role=None
    ).changed


def _offer(*, project: Project, person: Any, role: Role, actor: Any) -> None:
    now = timezone.now()
    declined = MembershipOffer.objects.filter(
        project=project, user=person, declined_at__gt=now - DECLINED_FOR
    )
    if declined.exists():
        return
    MembershipOffer.objects.update_or_create(
        project=project,
        user=person,
        defaults={"role": role, "offered_by": actor, "created_at": now, "declined_at": None},
    )
    NOTIFIED.send_on_commit(Notified(frozenset({person.pk})))


def _pending() -> Any:
    return MembershipOffer.objects.filter(declined_at=None)


def _withdraw(*, project: Project, person: Any) -> bool:
    deleted, _ = _pending().filter(project=project, user=person).delete()
    if deleted:
        NOTIFIED.send_on_commit(Notified(frozenset({person.pk})))
    return bool(deleted)


# --- the owners' view of a board's offers -----------------------------------------------------


def offers_of_board(*, actor: Any, project_id: UUID) -> list[PendingOffer]:
    """The offers of the board nobody has answered yet, newest first; for its owners."""
    project = access_project_role(
        user=actor, project_id=project_id, needed=Role.OWNER, doing="seeing the offers"
    )
    found = _pending().filter(project=project).select_related("user", "offered_by")
    return [
        PendingOffer(
            username=offer.user.get_username(),
            display_name=display_name(offer.user),
            role=Role(offer.role),
            offered_by=offer.offered_by.get_username(),
            created_at=offer.created_at,
        )
        for offer in found
    ]


# --- the person offered a board ---------------------------------------------------------------


def offers_mine(*, user: Any) -> list[dict[str, Any]]:
    """The boards offered to ``user``, newest first."""
    found = _pending().filter(user=user).select_related("project", "offered_by")
    return [render_offer(offer) for offer in found[:MAX_OFFERS_LISTED]]


def offer_accept(*, user: Any, offer_id: object) -> Project:
    """``user`` joins the offer's board with its role (or keeps a higher one they hold). An
    offer whose owner no longer owns the board is void: it goes, and is refused."""
    with transaction.atomic():
        offer = _mine(user=user, offer_id=offer_id, lock=True)
        project, role = offer.project, Role(offer.role)
        still_offered = offer.offered_by.is_active and (
            role_of(user=offer.offered_by, project=project) == Role.OWNER
        )
        offer.delete()
        NOTIFIED.send_on_commit(Notified(frozenset({user.pk})))
        if still_offered:
            held = role_of(user=user, project=project)
            if held is None or ROLE_RANK[held] < ROLE_RANK[role]:
                membership_set(user=user, project=project, role=role)
    if not still_offered:
        raise KanbanError(
            ErrorCode.NOT_FOUND, "This offer ended: whoever made it no longer owns the board."
        )
    return project


def offer_decline(*, user: Any, offer_id: object) -> None:
    """``user`` says no: the offer leaves their inbox, the board stays as it was, and it may
    not offer itself to them again for ``DECLINED_FOR``."""
    with transaction.atomic():
        offer = _mine(user=user, offer_id=offer_id, lock=True)
        offer.declined_at = timezone.now()
        offer.save(update_fields=["declined_at"])
        NOTIFIED.send_on_commit(Notified(frozenset({user.pk})))


def _mine(*, user: Any, offer_id: object, lock: bool) -> MembershipOffer:
    if type(offer_id) is not int or not 0 < offer_id <= MAX_ID:
        raise KanbanError(ErrorCode.NOT_FOUND, "There is no such offer.")
    found = _pending().select_related("project", "offered_by")
    if lock:
        found = found.select_for_update(of=("self",))
    offer = found.filter(pk=offer_id, user_id=user.pk).first()
    if offer is None:
        raise KanbanError(ErrorCode.NOT_FOUND, "There is no such offer.")
    return offer


def render_offer(offer: MembershipOffer) -> dict[str, Any]:
    return {
        "id": offer.pk,
        "board": {"id": str(offer.project_id), "name": offer.project.name},
        "role": str(offer.role),
        "offeredBy": {
            "username": offer.offered_by.get_username(),
            "displayName": display_name(offer.offered_by),
        },
        "createdAt": offer.created_at.isoformat(),
    }
