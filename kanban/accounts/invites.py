"""Invite links: an owner brings people onto a board with a role, without an administrator.

A link carries a secret; only its hash is stored. It works until it expires, is revoked,
or has been used its number of times, and only while its maker owns the board (losing
ownership revokes one's links). A person without an account chooses a username and
password on the link's page (the same rules as everywhere: ``user_create``), within the
day's sign-up limits (``kanban.quotas.sign_in``); a signed-in person accepts with one
click. Accepting never lowers a role someone already holds, and uses the link only when it
gives them something.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from smtplib import SMTPException
from typing import Any, Final
from uuid import UUID

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone
from django.utils.html import format_html

from kanban.access.memberships import (
    access_project_role,
    check_role,
    display_name,
    membership_set,
    role_of,
)
from kanban.accounts.users import user_create
from kanban.models import ROLE_RANK, Invite, Project, Role
from kanban.quotas.sign_in import sign_up_admit
from storage.errors import ErrorCode, KanbanError, invalid_argument

MAX_DAYS: Final = 30
MAX_USES: Final = 100
#: Links a board may have working at once: past it, revoke one first.
MAX_ACTIVE: Final = 50
PATH: Final = "/invites/{token}/"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _bounded(value: object, *, field: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise invalid_argument(f"{field} is a whole number from {low} to {high}", field=field)
    return value


@dataclass(frozen=True, slots=True)
class Created:
    invite: Invite
    #: Where the link goes, under this server's address; shown once, never stored.
    path: str


def invite_create(
    *, actor: Any, project_id: UUID, role: object, days: object = 7, uses: object = 1
) -> Created:
    """An owner's new link for ``role`` (guest, developer or owner), working ``days`` days
    (1-30) for ``uses`` people (1-100)."""
    checked = check_role(role)
    if checked is None:
        raise invalid_argument("an invite is for a role: guest, developer or owner", field="role")
    lifetime = timedelta(days=_bounded(days, field="days", low=1, high=MAX_DAYS))
    max_uses = _bounded(uses, field="uses", low=1, high=MAX_USES)
    project = access_project_role(
        user=actor, project_id=project_id, needed=Role.OWNER, doing="inviting people"
    )
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()
        if len(invites_active(project=project)) >= MAX_ACTIVE:
            raise KanbanError(
                ErrorCode.CONFLICT, f"a board has at most {MAX_ACTIVE} working invite links"
            )
        token = secrets.token_urlsafe(24)
        invite = Invite.objects.create(
            project=project,
            role=checked,
            digest=_digest(token),
            created_by=actor,
            expires_at=timezone.now() + lifetime,
            max_uses=max_uses,
        )
    return Created(invite=invite, path=PATH.format(token=token))


def check_email(to: object) -> str:
    """An address an invite may be sent to; checked before the invite is made, so a bad one
    makes nothing."""
    try:
        if not isinstance(to, str):
            raise ValidationError("not text")
        validate_email(to)
    except ValidationError:
        raise invalid_argument("that is not an email address", field="email") from None
    return to


def invite_email(*, actor: Any, created: Created, url: str, to: object) -> None:
    """Sends the new link to ``to`` when the server sends email (``KANBAN_EMAIL_ENABLED``),
    ``not_supported`` otherwise. The mail is queued (``EMAIL_BACKEND``, kanban/jobs/email.py)
    and the worker delivers it, retrying; ``unavailable`` only from a backend that sends at
    once and is refused."""
    if not settings.KANBAN_EMAIL_ENABLED:
        raise KanbanError(ErrorCode.NOT_SUPPORTED, "this server sends no email")
    check_email(to)
    project = created.invite.project
    body = (
        f"{display_name(actor)} invites you to the board {project.name} as a "
        f"{created.invite.role}.\n\nOpen this link to join (it works until "
        f"{created.invite.expires_at:%Y-%m-%d %H:%M} UTC):\n\n{url}\n"
    )
    try:
        html = format_html(
            '<!doctype html><html lang="en"><body style="font:15px/1.5 system-ui,sans-serif;'
            'color:#1d2330"><p><strong>{}</strong> invites you to the board <strong>{}</strong> '
            'as a {}.</p><p><a href="{}" style="display:inline-block;padding:.45rem .9rem;'
            'border-radius:6px;background:#3559e0;color:#fff;text-decoration:none">Join {}</a>'
            '</p><p style="color:#667085">The link works until {} UTC.</p></body></html>',
            display_name(actor),
            project.name,
            created.invite.role,
            url,
            project.name,
            f"{created.invite.expires_at:%Y-%m-%d %H:%M}",
        )
        send_mail(f"Join {project.name}", body, None, [str(to)], html_message=html)
    except (OSError, SMTPException) as error:
        raise KanbanError(
            ErrorCode.UNAVAILABLE, f"the mail server did not take it ({error})"
        ) from None


def invites_active(*, project: Project) -> list[Invite]:
    found = Invite.objects.filter(project=project, revoked_at=None).select_related("created_by")
    working = [invite for invite in found if _problem(invite) is None]
    # One look at each maker, not at each of up to MAX_ACTIVE links.
    makers = {invite.created_by_id: invite for invite in working}
    gone = {maker for maker, invite in makers.items() if _maker_problem(invite) is not None}
    return [invite for invite in working if invite.created_by_id not in gone]


def invites_list(*, actor: Any, project_id: UUID) -> list[Invite]:
    """The board's working links, newest first, for its owners."""
    project = access_project_role(
        user=actor, project_id=project_id, needed=Role.OWNER, doing="seeing invite links"
    )
    return invites_active(project=project)


def invite_revoke(*, actor: Any, project_id: UUID, invite_id: object) -> bool:
    """Whether a working link was revoked; a link already ended is left as it is."""
    project = access_project_role(
        user=actor, project_id=project_id, needed=Role.OWNER, doing="revoking invite links"
    )
    if type(invite_id) is not int or not 0 < invite_id < 2**63:
        raise invalid_argument("an invite id is a positive number", field="invite")
    return bool(
        Invite.objects.filter(project=project, pk=invite_id, revoked_at=None).update(
            revoked_at=timezone.now()
        )
    )


def _problem(invite: Invite) -> str | None:
    if invite.revoked_at is not None:
        return "This invite link was revoked."
    if invite.expires_at <= timezone.now():
        return "This invite link has expired."
    if invite.uses >= invite.max_uses:
        return "This invite link has been used up."
    if invite.project.archived_at is not None:
        return "The board of this invite link is archived."
    return None


def invite_find(*, token: object, lock: bool = False) -> Invite:
    """The working invite a link's secret names, or ``not_found`` saying why not."""
    if not isinstance(token, str) or not token.isascii() or not 20 <= len(token) <= 64:
        raise KanbanError(ErrorCode.NOT_FOUND, "There is no such invite link.")
    found = Invite.objects.select_related("project", "created_by")
    if lock:
        found = found.select_for_update(of=("self",))
    invite = found.filter(digest=_digest(token)).first()
    if invite is None:
        raise KanbanError(ErrorCode.NOT_FOUND, "There is no such invite link.")
    problem = _problem(invite) or _maker_problem(invite)
    if problem is not None:
        raise KanbanError(ErrorCode.NOT_FOUND, problem)
    return invite


def _maker_problem(invite: Invite) -> str | None:
    """A link speaks for its maker: it admits nobody once they no longer own the board.
    Losing ownership by a membership change revokes their links already; this also covers
    a superuser's links (owner of every board without a membership) and a deactivation."""
    maker = invite.created_by
    if maker.is_active and role_of(user=maker, project=invite.project) == Role.OWNER:
        return None
    return "The person who made this invite link no longer owns its board."


def invite_accept(*, user: Any, token: object) -> Project:
    """``user`` joins the link's board with its role (or keeps a higher one they hold)."""
    with transaction.atomic():
        invite = invite_find(token=token, lock=True)
        held = role_of(user=user, project=invite.project)
        if held is None or ROLE_RANK[held] < ROLE_RANK[Role(invite.role)]:
            membership_set(user=user, project=invite.project, role=invite.role)
            invite.uses += 1
            invite.save(update_fields=["uses"])
    return invite.project


def check_invite_makes_accounts(*, invite: Invite) -> None:
    """``forbidden`` when this server lets only its staff's links make accounts
    (``KANBAN_INVITE_SIGNUPS=staff``) and the link's maker is not staff."""
    maker = invite.created_by
    if settings.KANBAN_INVITE_SIGNUPS == "staff" and not (maker.is_staff or maker.is_superuser):
        raise KanbanError(
            ErrorCode.FORBIDDEN,
            "On this server only a staff member's invite link makes new accounts: "
            "log in with the account you have, then open this link again.",
        )


def invite_sign_up(
    *, token: object, username: object, password: object, address: str | None = None
) -> tuple[Any, Project]:
    """A new person's account, made through the link from ``address`` (the client's), and
    the board it joined. Nothing is created when the link no longer works or may not make
    accounts, the username or password is refused, or the day's sign-ups through the
    inviter's links or from the address are used up (``rate_limited``, saying when to try
    again)."""
    if not isinstance(username, str) or not isinstance(password, str):
        raise invalid_argument("a username and a password are needed")
    with transaction.atomic():
        invite = invite_find(token=token, lock=True)
        check_invite_makes_accounts(invite=invite)
        user = user_create(username=username, password=password)
        # Counted after the password is hashed, so the deployment-wide lock it takes is held
        # only for the rest of this transaction; a refusal rolls the new account back.
        sign_up_admit(inviter=invite.created_by, address=address)
        project = invite_accept(user=user, token=token)
    return user, project
