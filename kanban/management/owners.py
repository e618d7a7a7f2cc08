"""Who owns a project a command creates: ``--owner USERNAME``, else the one superuser there
is, else the person at the terminal, asked. Without any of them (a script, on a database
with no superuser or several) the project starts without an owner, and the command says
how to give it one: only a superuser could manage it until then."""

from __future__ import annotations

import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser


def add_owner_argument(parser: CommandParser, *, what: str, more: str = "") -> None:
    """``--owner USERNAME``, its help saying what ``resolve_owner`` does without it."""
    parser.add_argument(
        "--owner",
        metavar="USERNAME",
        help=f"who owns {what} (default: the only superuser, else asked){more}",
    )


def resolve_owner(username: str | None, *, ask: bool | None = None) -> Any | None:
    """The active user ``--owner`` names, or the default above (None: nobody to default
    to). ``ask`` (default: when stdin is a terminal) lets the command prompt for a username
    when no default exists."""
    users = get_user_model().objects.filter(is_active=True)
    if username:
        owner = users.filter(username__iexact=username).first()
        if owner is None:
            raise CommandError(f"--owner {username}: no such active user")
        return owner
    superusers = list(users.filter(is_superuser=True)[:2])
    if len(superusers) == 1:
        return superusers[0]
    if ask if ask is not None else sys.stdin.isatty():
        answer = input("Who owns the new project? Username: ").strip()
        return resolve_owner(answer or None, ask=False)
    return None


NO_OWNER = (
    "The new project has no owner (no --owner, and not exactly one superuser to default to): "
    "give it one with  python manage.py membership USERNAME {project_id} owner"
)
