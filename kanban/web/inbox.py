"""A person's inbox on the web: the count in every page's top bar (kept current by
``static/kanban/inbox.js`` over ``/ws/inbox/``), the list on the dashboard, marking read,
and answering the boards offered to them. Changes are forms (POST), never links that change
something when followed."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from kanban.accounts.preferences import color_scheme_of
from kanban.data.members import offer_accept, offer_decline, offers_mine
from kanban.data.notifications import (
    inbox_unread,
    notification_open,
    notifications_list,
    notifications_read,
)
from storage.errors import KanbanError

INBOX = "/#inbox"
#: Where an offer that is no longer open sends its answer: the inbox, which says so.
OFFER_GONE = "/?offer=gone#inbox"
#: The newest notifications the dashboard lists (REST pages through all of them).
INBOX_SHOWN = 20


def inbox_count(request: HttpRequest) -> dict[str, Any]:
    """Context processor: what every page's top bar needs of a signed-in person: the
    unread count and the colour scheme they chose (kanban.accounts.preferences)."""
    if not getattr(request.user, "is_authenticated", False):
        return {}
    return {
        "inbox_unread": inbox_unread(user=request.user),
        "color_scheme": color_scheme_of(user=request.user),
    }


def inbox_context(request: HttpRequest) -> dict[str, Any]:
    """The dashboard's inbox list (``templates/kanban/includes/inbox.html``)."""
    return {
        "inbox": notifications_list(user=request.user, limit=INBOX_SHOWN),
        "offers": offers_mine(user=request.user),
        "offer_gone": request.GET.get("offer") == "gone",
    }


@login_required
@require_GET
@never_cache
def inbox_list(request: HttpRequest) -> HttpResponse:
    """The dashboard's inbox list alone: ``static/kanban/dashboard.js`` fetches it when the
    inbox socket says the inbox changed, so the list is as current as the count."""
    return render(request, "kanban/includes/inbox.html", inbox_context(request))


@login_required
@require_POST
def notification_follow(request: HttpRequest, notification_id: int) -> HttpResponse:
    """Marks it read and goes to its card (to the inbox when it is no longer there)."""
    return redirect(notification_open(user=request.user, notification_id=notification_id) or INBOX)


@login_required
@require_POST
def notifications_all_read(request: HttpRequest) -> HttpResponse:
    notifications_read(user=request.user)
    return redirect(INBOX)


@login_required
@require_POST
def offer_yes(request: HttpRequest, offer_id: int) -> HttpResponse:
    """Joins the offered board and opens it (back to the inbox, saying why, when it ended)."""
    try:
        project = offer_accept(user=request.user, offer_id=offer_id)
    except KanbanError:
        return redirect(OFFER_GONE)
    return redirect("board", project.id)


@login_required
@require_POST
def offer_no(request: HttpRequest, offer_id: int) -> HttpResponse:
    try:
        offer_decline(user=request.user, offer_id=offer_id)
    except KanbanError:
        return redirect(OFFER_GONE)
    return redirect(INBOX)
