"""How a board looks on the dashboards: its colour, from a small palette an owner picks
from on the members page, or a stable one from its id until they do."""

from __future__ import annotations

import zlib
from typing import Any, Final
from uuid import UUID

from kanban.access.memberships import access_project_role
from kanban.models import Project, Role
from storage.errors import invalid_argument

#: name -> the tile's stripe, readable on a light and a dark page alike.
BOARD_COLORS: Final[dict[str, str]] = {
    "blue": "#3559e0",
    "teal": "#0e9384",
    "green": "#3f9c35",
    "yellow": "#d9a300",
    "orange": "#e8590c",
    "red": "#d92d20",
    "pink": "#d6409f",
    "purple": "#7a5af8",
    "gray": "#667085",
}
_NAMES: Final = tuple(BOARD_COLORS)


def board_color(project: Project) -> str:
    """The board's colour name: its owner's choice, else one its id always gives."""
    if project.color in BOARD_COLORS:
        return project.color
    return _NAMES[zlib.crc32(project.id.bytes) % len(_NAMES)]


def project_color_set(*, actor: Any, project_id: UUID, color: object) -> Project:
    """An owner picks the board's colour (``""`` goes back to the default)."""
    if not isinstance(color, str) or (color and color not in BOARD_COLORS):
        names = ", ".join(BOARD_COLORS)
        raise invalid_argument(f"color is one of {names}, or empty", field="color")
    project = access_project_role(
        user=actor, project_id=project_id, needed=Role.OWNER, doing="choosing a board's colour"
    )
    if project.color != color:
        project.color = color
        project.save(update_fields=["color", "updated_at"])
    return project
