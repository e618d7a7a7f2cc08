"""MCP resources: each Board the token may read, as ``kanban://boards/{id}`` (the board: its
columns, labels and card counts) and ``kanban://boards/{id}/cards`` (its cards), JSON text.

Listed for the boards of the token's scope (``access_token_scope``) that run the built-in
Board and that its person may read; read under the same two checks. A board outside them is
the spec's resource-not-found error (-32002, with the uri), whether it exists or not.
"""

from __future__ import annotations

import re
from typing import Any, Final
from uuid import UUID

from kanban.accounts.tokens import access_token_scope
from kanban.data.board import watched
from kanban.models import ApiToken
from storage import jsoncodec
from storage.errors import KanbanError

SCHEME: Final = "kanban"
MIME: Final = "application/json"
BOARD_TEMPLATE: Final = "kanban://boards/{id}"
CARDS_TEMPLATE: Final = "kanban://boards/{id}/cards"
#: The 2025-11-25 spec's code for a resource that does not exist (or is not this token's).
RESOURCE_NOT_FOUND: Final = -32002
_URI: Final = re.compile(r"kanban://boards/([0-9a-fA-F-]{36})(/cards)?")


class ResourceNotFound(Exception):
    def __init__(self, uri: str) -> None:
        super().__init__(f"no resource {uri!r} for this token")
        self.uri = uri


def board_uri(project_id: UUID) -> str:
    return BOARD_TEMPLATE.format(id=project_id)


def cards_uri(project_id: UUID) -> str:
    return CARDS_TEMPLATE.format(id=project_id)


def parse_uri(uri: str) -> tuple[UUID, bool] | None:
    """(the board, whether its cards are meant), or None for no URI of this server."""
    match = _URI.fullmatch(uri)
    if match is None:
        return None
    try:
        return UUID(match.group(1)), match.group(2) is not None
    except ValueError:
        return None


def _scope(token: ApiToken) -> list[UUID]:
    assert token.project_id is not None  # the endpoint takes scoped tokens only
    return [token.project_id, *token.more_projects.values_list("pk", flat=True)]


def resources_list(*, token: ApiToken) -> list[dict[str, Any]]:
    """Each readable board's two resources: ``{uri, name, title, description, mimeType}``."""
    listed = []
    for project in watched.board_projects(_scope(token)):
        if not watched.board_readable(user=token.user, project_id=project.id):
            continue
        listed.append(
            {
                "uri": board_uri(project.id),
                "name": f"board-{project.id}",
                "title": project.name,
                "description": f"The Board {project.name!r}: its columns, labels and card "
                "counts. Subscribe to hear when anything on it changes.",
                "mimeType": MIME,
            }
        )
        listed.append(
            {
                "uri": cards_uri(project.id),
                "name": f"board-{project.id}-cards",
                "title": f"{project.name}: cards",
                "description": f"Every card on the Board {project.name!r} that is not "
                "archived, in the order the Board shows them, each with its revision.",
                "mimeType": MIME,
            }
        )
    return listed


TEMPLATES: Final = (
    {
        "uriTemplate": BOARD_TEMPLATE,
        "name": "board",
        "title": "A Board",
        "description": "A Board the token may read: its columns, labels and card counts.",
        "mimeType": MIME,
    },
    {
        "uriTemplate": CARDS_TEMPLATE,
        "name": "board-cards",
        "title": "A Board's cards",
        "description": "Every card of a Board the token may read that is not archived.",
        "mimeType": MIME,
    },
)


def check_readable(*, token: ApiToken, uri: str) -> tuple[UUID, bool]:
    """The board ``uri`` names and whether its cards are meant, if this token may read it;
    ``ResourceNotFound`` otherwise."""
    parsed = parse_uri(uri)
    if parsed is None:
        raise ResourceNotFound(uri)
    project_id, _ = parsed
    try:
        access_token_scope(token=token, project_id=project_id, write=False)
    except KanbanError:
        raise ResourceNotFound(uri) from None
    if not watched.board_projects([project_id]) or not watched.board_readable(
        user=token.user, project_id=project_id
    ):
        raise ResourceNotFound(uri)
    return parsed


def resource_read(*, token: ApiToken, uri: str) -> str:
    """The resource's JSON text; ``ResourceNotFound`` for one this token may not read."""
    project_id, of_cards = check_readable(token=token, uri=uri)
    try:
        if of_cards:
            value = watched.board_cards_read(user=token.user, project_id=project_id)
        else:
            value = watched.board_read(user=token.user, project_id=project_id)
    except KanbanError:
        raise ResourceNotFound(uri) from None
    return jsoncodec.encode(value)
