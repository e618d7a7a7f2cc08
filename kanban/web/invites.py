"""Invite links on the web: a board's owners make and revoke them on the members page; the
person who opens one joins with a click, or first chooses a username and password."""

from __future__ import annotations

from typing import Any, Final
from uuid import UUID

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from kanban.accounts.invites import (
    check_invite_makes_accounts,
    invite_accept,
    invite_create,
    invite_email,
    invite_find,
    invite_revoke,
    invite_sign_up,
)
from kanban.quotas.client_address import client_address
from kanban.web.dashboard import members_page, refusals_rendered
from storage.errors import ErrorCode, KanbanError, invalid_argument

#: The one backend sessions are checked against (a session naming another is dropped).
BACKEND = settings.AUTHENTICATION_BACKENDS[0]


def _number(raw: str) -> int | str:
    return int(raw) if raw.isdecimal() and len(raw) < 6 else raw


@login_required
@require_POST
@refusals_rendered
def invite_new(request: HttpRequest, project_id: UUID) -> HttpResponse:
    """The new link is shown once, on the members page that made it."""
    form = {name: request.POST.get(name, "") for name in ("role", "days", "uses")}
    try:
        created = invite_create(
            actor=request.user,
            project_id=project_id,
            role=form["role"],
            days=_number(form["days"]),
            uses=_number(form["uses"]),
        )
    except KanbanError as refused:
        return members_page(request, project_id, invite_error={**form, "message": refused.message})
    link = request.build_absolute_uri(created.path)
    shown = {"url": link, "role": form["role"]}
    to = request.POST.get("email", "").strip()
    if to:
        try:
            invite_email(actor=request.user, created=created, url=link, to=to)
        except KanbanError as refused:
            shown["unsent"] = f"Not sent to {to}: {refused.message}"
        else:
            shown["sent"] = to
    return members_page(request, project_id, invite_link=shown)


@login_required
@require_POST
@refusals_rendered
def invite_end(request: HttpRequest, project_id: UUID, invite_id: int) -> HttpResponse:
    try:
        invite_revoke(actor=request.user, project_id=project_id, invite_id=invite_id)
    except KanbanError as refused:
        return members_page(request, project_id, invite_error={"message": refused.message})
    return redirect(reverse("board-members", args=[project_id]) + "?revoked=1")


@require_http_methods(["GET", "POST"])
def invite(request: HttpRequest, token: str) -> HttpResponse:
    try:
        found = invite_find(token=token)
    except KanbanError as refused:
        return render(request, "kanban/invite.html", {"problem": refused.message}, status=404)
    context: dict[str, Any] = {"invite": found, "token": token, "username": ""}
    if not request.user.is_authenticated:
        try:
            check_invite_makes_accounts(invite=found)
        except KanbanError as refused:
            context["sign_up_refused"] = refused.message  # the page offers to log in only
    if request.method == "POST":
        try:
            if request.user.is_authenticated:
                project = invite_accept(user=request.user, token=token)
            else:
                project = _sign_up(request, token)
        except KanbanError as refused:
            context.update(error=refused.message, username=request.POST.get("username", ""))
            response = render(
                request, "kanban/invite.html", context, status=_STATUS.get(refused.code, 400)
            )
            if "retryAfter" in refused.details:
                response["Retry-After"] = str(refused.details["retryAfter"])
            return response
        return redirect("board", project.id)
    return render(request, "kanban/invite.html", context)


#: A refused join or sign-up's status; anything else is a bad form (400).
_STATUS: Final = {ErrorCode.RATE_LIMITED: 429, ErrorCode.FORBIDDEN: 403}


def _sign_up(request: HttpRequest, token: str) -> Any:
    password = request.POST.get("password", "")
    if password != request.POST.get("password2", ""):
        raise invalid_argument("The two passwords differ.", field="password2")
    user, project = invite_sign_up(
        token=token,
        username=request.POST.get("username", "").strip(),
        password=password,
        address=client_address(request),
    )
    login(request, user, backend=BACKEND)
    return project
