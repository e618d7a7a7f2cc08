"""The account page's personal access tokens: make one (shown once), see the list with
when each was last used and when it expires, revoke one. The services are
``kanban.accounts.tokens``; this only parses the form and renders."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from kanban.accounts.tokens import token_create, token_revoke_own, tokens_of
from kanban.models import TokenScope
from kanban.projects.boards import boards_for_user
from storage.errors import KanbanError, invalid_argument

#: The lifetimes the form offers (a token lives at most a year; "never" is no expiry).
LIFETIMES: Final[dict[str, timedelta | None]] = {
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
    "90d": timedelta(days=90),
    "365d": timedelta(days=365),
    "never": None,
}
LIFETIME_LABELS: Final = {
    "7d": "7 days",
    "30d": "30 days",
    "90d": "90 days",
    "365d": "A year",
    "never": "Never",
}


_CREATED: Final = "kanban.token_created"


def _board_ids(raw: list[str]) -> list[UUID]:
    """The boards ticked, in the page's order; none ticked is all of them."""
    try:
        return [UUID(value) for value in raw if value]
    except ValueError:
        raise invalid_argument(
            "choose some of your boards, or all of them", field="board"
        ) from None


def _lifetime(raw: str) -> timedelta | None:
    if raw not in LIFETIMES:
        raise invalid_argument("choose when the token expires", field="expires")
    return LIFETIMES[raw]


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def tokens_page(request: HttpRequest) -> HttpResponse:
    created: dict[str, Any] | None = None
    error: str | None = None
    form: dict[str, Any] = {"name": "", "scope": TokenScope.READ, "expires": "30d"}
    chosen: list[str] = []
    if request.method == "POST":
        form = {name: request.POST.get(name, "").strip() for name in form}
        chosen = request.POST.getlist("board")[:100]
        try:
            boards = _board_ids(chosen)
            token, plaintext = token_create(
                user=request.user,
                name=form["name"][:100],
                scope=form["scope"],
                project_id=boards[0] if boards else None,
                more_project_ids=boards[1:],
                lifetime=_lifetime(form["expires"]),
            )
        except KanbanError as refused:
            error = refused.message
        else:
            # Shown once, on the page the redirect leads to (so a reload makes no second
            # token): kept in the session only until that page pops it.
            request.session[_CREATED] = {"id": token.pk, "plaintext": plaintext}
            return redirect("account-tokens")
    shown = request.session.pop(_CREATED, None)
    if isinstance(shown, dict):
        made = next((t for t in tokens_of(user=request.user) if t.pk == shown.get("id")), None)
        created = None if made is None else {"token": made, "plaintext": shown.get("plaintext")}
    context = {
        "tokens": tokens_of(user=request.user),
        "boards": boards_for_user(user=request.user),
        "scopes": TokenScope.choices,
        "lifetimes": LIFETIME_LABELS.items(),
        "form": form,
        "chosen": chosen,
        "error": error,
        "created": created,
        "revoked": request.GET.get("revoked", ""),
    }
    return render(request, "kanban/tokens.html", context, status=400 if error else 200)


@login_required
@require_POST
def token_revoke_page(request: HttpRequest, token_id: int) -> HttpResponse:
    try:
        token = token_revoke_own(user=request.user, token_id=token_id)
    except KanbanError as refused:
        return HttpResponse(refused.message, status=404, content_type="text/plain")
    return redirect(f"{reverse('account-tokens')}?revoked={token.prefix}")
