"""The dashboard and the pages around it: creating a board, the archive, a board's members.

Plain forms that work without JavaScript; each view parses, calls one service and renders
(or redirects after a change, so a reload never repeats it)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from kanban.access.memberships import Member, members_list
from kanban.accounts.invites import MAX_DAYS, MAX_USES, invites_list
from kanban.data.board.search import cards_search
from kanban.data.demo import demo_is_loaded
from kanban.data.members import member_leave, member_set, offers_of_board
from kanban.models import Role
from kanban.projects import boards
from kanban.projects.appearance import BOARD_COLORS, board_color, project_color_set
from kanban.projects.board_templates import TEMPLATE_LABELS, Template, board_create
from kanban.projects.lifecycle import project_archive, project_delete_by_owner
from kanban.projects.listing import Listed, Sort, projects_listed
from kanban.web.avatars import avatar
from kanban.web.inbox import inbox_context
from kanban.web.views import refusal_page
from storage.errors import ErrorCode, KanbanError


class _PageRefused(Exception):
    """A page's refusal: a non-member learns nothing (404), a member is told why (403),
    on the product's own pages, in development too (``refusals_rendered``)."""

    def __init__(self, error: KanbanError) -> None:
        super().__init__(error.message)
        self.error = error

    def response(self, request: HttpRequest) -> HttpResponse:
        return refusal_page(request, self.error)


def refusals_rendered(view: Any) -> Any:
    """The view, with a refusal it raises answered by the product's 404 or 403 page."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            response: HttpResponse = view(request, *args, **kwargs)
        except _PageRefused as refused:
            return refused.response(request)
        return response

    return wrapped


#: The cards a dashboard search shows (REST pages through all of them).
CARDS_SHOWN = 20

#: How many avatars a tile shows before "+N".
TILE_AVATARS = 5


def _avatar(member: Member) -> dict[str, Any]:
    # kanban.web.avatars: the same face for the person on every page and in the Board.
    return avatar(username=member.username, display_name=member.display_name, member=member)


def _tile(item: Listed) -> dict[str, Any]:
    avatars = [_avatar(member) for member in item.members]
    return {
        "project": item.project,
        "color": BOARD_COLORS[board_color(item.project)],
        "role": item.role,
        "avatars": avatars[:TILE_AVATARS],
        "more": max(0, len(avatars) - TILE_AVATARS),
        "members": item.members,
        "last_change": item.last_change,
        "owner": item.role == Role.OWNER,
    }


def _listing(request: HttpRequest, *, archived: bool) -> dict[str, Any]:
    query = request.GET.get("q", "")
    sort = request.GET.get("sort") or Sort.NAME
    error = None
    try:
        listed = projects_listed(
            user=request.user, query=query, sort=sort, archived=archived, kanban_only=True
        )
    except KanbanError as refused:
        error, listed = refused.message, []
    return {
        "tiles": [_tile(item) for item in listed],
        "query": query,
        "sort": sort,
        "sorts": [(Sort.NAME, "Name"), (Sort.CHANGED, "Last change")],
        "list_error": error,
    }


def _card_search(request: HttpRequest, query: str) -> dict[str, Any]:
    """The dashboard's search finds cards too, on every board the person can read."""
    if not query.strip():
        return {}
    try:
        found = cards_search(user=request.user, query=query, limit=CARDS_SHOWN)
    except KanbanError as refused:
        return {"card_results": [], "card_error": refused.message}
    return {"card_results": found["results"], "card_more": found["cursor"] is not None}


@login_required
@require_http_methods(["GET"])
def dashboard(request: HttpRequest) -> HttpResponse:
    return _dashboard(request, form={"name": "", "template": Template.BOARD})


def _dashboard(
    request: HttpRequest, *, form: dict[str, str], status: int = 200, **extra: Any
) -> HttpResponse:
    context = _listing(request, archived=False)
    context.update(
        demo=not settings.PRODUCTION and demo_is_loaded(),
        templates=[(value, *TEMPLATE_LABELS[value]) for value in Template],
        form=form,
        deleted=request.GET.get("deleted", ""),
        **inbox_context(request),
        left=request.GET.get("left", ""),
        **_card_search(request, context["query"]),
        **extra,
    )
    return render(request, "kanban/dashboard.html", context, status=status)


@login_required
@require_POST
def board_new(request: HttpRequest) -> HttpResponse:
    name, template = request.POST.get("name", ""), request.POST.get("template", "")
    try:
        project = board_create(user=request.user, name=name, template=template)
    except KanbanError as error:
        return _dashboard(
            request,
            form={"name": name, "template": template},
            status=400,
            create_error=error.message,
            create_open=True,
        )
    return redirect("board", project.id)


@login_required
@require_http_methods(["GET"])
def archive(request: HttpRequest) -> HttpResponse:
    return render(request, "kanban/archive.html", _listing(request, archived=True))


@login_required
@require_POST
@refusals_rendered
def board_archive(request: HttpRequest, project_id: UUID) -> HttpResponse:
    archived = request.POST.get("archived") == "true"
    try:
        project_archive(actor=request.user, project_id=project_id, archived=archived)
    except KanbanError as error:
        raise _PageRefused(error) from None
    return redirect("dashboard")


@login_required
@require_http_methods(["GET", "POST"])
@refusals_rendered
def members(request: HttpRequest, project_id: UUID) -> HttpResponse:
    project = _board_or_404(request, project_id)
    error = None
    if request.method == "POST":
        username = request.POST.get("username", "")
        role = request.POST.get("role", "")
        try:
            change = member_set(
                actor=request.user, project_id=project.id, username=username, role=role
            )
        except KanbanError as refused:
            error = {"username": username, "role": role, "message": refused.message}
        else:
            if change.changed and role == "none" and username == request.user.get_username():
                return _left(project)  # their own Remove: the members page is not theirs now
            said = "offered" if change.offered else "changed"
            page = reverse("board-members", args=[project.id])
            return redirect(f"{page}?{urlencode({said: username, 'role': role})}")
    return _members_page(request, project, error=error)


def _board_or_404(request: HttpRequest, project_id: UUID) -> Any:
    try:
        return boards.access_board(user=request.user, project_id=project_id)
    except KanbanError as refused_page:
        raise _PageRefused(refused_page) from None


def _members_form(
    request: HttpRequest,
    project_id: UUID,
    change: Callable[..., object],
    *,
    shown: ErrorCode,
    as_: str,
    then: Callable[[Any], HttpResponse],
) -> HttpResponse:
    """A members-page form that changes the board: ``change(actor=, project_id=)``, then
    ``then(project)``. Its refusal of the kind the form can mend is shown beside it (as the
    page's ``as_``); any other refuses the page."""
    project = _board_or_404(request, project_id)
    try:
        change(actor=request.user, project_id=project.id)
    except KanbanError as refused:
        if refused.code != shown:
            raise _PageRefused(refused) from None
        shown_as: dict[str, Any] = {as_: refused.message}
        return _members_page(request, project, **shown_as)
    return then(project)


def members_page(request: HttpRequest, project_id: UUID, **extra: Any) -> HttpResponse:
    """The members page with what a form elsewhere adds to it (an invite link's outcome)."""
    return _members_page(request, _board_or_404(request, project_id), **extra)


def _members_page(
    request: HttpRequest,
    project: Any,
    *,
    error: Any = None,
    delete_error: str | None = None,
    leave_error: str | None = None,
    invite_error: dict[str, Any] | None = None,
    invite_link: dict[str, str] | None = None,
    color_error: str | None = None,
) -> HttpResponse:
    listed = members_list(user=request.user, project_id=project.id)
    mine = next((m.role for m in listed if m.user_id == request.user.pk), None)
    owner = mine == Role.OWNER or bool(getattr(request.user, "is_superuser", False))
    context = {
        "project": project,
        "members": [_avatar(member) for member in listed],
        "owner": owner,
        # The board archive's and the CSV's own rule (kanban/imports/board_export.py).
        "exporter": owner or mine == Role.DEVELOPER,
        "roles": [Role.GUEST, Role.DEVELOPER, Role.OWNER],
        "error": error,
        "delete_error": delete_error,
        "changed": request.GET.get("changed", ""),
        "offered": request.GET.get("offered", ""),
        "offered_role": request.GET.get("role", ""),
        "offers": offers_of_board(actor=request.user, project_id=project.id) if owner else [],
        "member": mine is not None,
        "leave_error": leave_error,
        "archived": project.archived_at is not None,
        "invites": invites_list(actor=request.user, project_id=project.id) if owner else [],
        "invite_error": invite_error,
        "invite_link": invite_link,
        "revoked": request.GET.get("revoked") == "1",
        "invite_limits": {"days": MAX_DAYS, "uses": MAX_USES},
        "invite_email": settings.KANBAN_EMAIL_ENABLED,
        "colors": BOARD_COLORS,
        "color": board_color(project),
        "color_chosen": project.color,
        "color_error": color_error,
        "color_saved": request.GET.get("color") == "saved",
    }
    errors = (error, delete_error, invite_error, leave_error, color_error)
    refused = any(e is not None for e in errors)
    return render(request, "kanban/members.html", context, status=400 if refused else 200)


@login_required
@require_POST
@refusals_rendered
def board_color_choose(request: HttpRequest, project_id: UUID) -> HttpResponse:
    """An owner picks the board's colour for its tile (empty: its default again)."""
    return _members_form(
        request,
        project_id,
        functools.partial(project_color_set, color=request.POST.get("color", "")),
        shown=ErrorCode.INVALID_ARGUMENT,
        as_="color_error",
        then=lambda project: redirect(reverse("board-members", args=[project.id]) + "?color=saved"),
    )


@login_required
@require_POST
@refusals_rendered
def board_delete(request: HttpRequest, project_id: UUID) -> HttpResponse:
    """An owner deletes the board for good, having typed its name to confirm."""
    project = _board_or_404(request, project_id)
    if request.POST.get("confirm", "") != project.name:
        message = f"Type the board's name, {project.name}, exactly, to delete it."
        return _members_page(request, project, delete_error=message)
    try:
        project_delete_by_owner(actor=request.user, project_id=project.id)
    except KanbanError as refused:
        raise _PageRefused(refused) from None
    return redirect(reverse("dashboard") + "?deleted=" + project.name)


@login_required
@require_POST
@refusals_rendered
def board_leave(request: HttpRequest, project_id: UUID) -> HttpResponse:
    """A member leaves the board: it goes from their dashboard and their open boards close."""
    return _members_form(
        request, project_id, member_leave, shown=ErrorCode.CONFLICT, as_="leave_error", then=_left
    )


def _left(project: Any) -> HttpResponse:
    return redirect(f"{reverse('dashboard')}?{urlencode({'left': project.name})}")
