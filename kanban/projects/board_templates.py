"""New boards from a template: the built-in Board, the Inventory, or a blank plugin (the
``startplugin`` skeleton).

A board made from a template is a project of its own: a fresh UUID, its own copy of the
template's plugin files (a later import of the template's package changes nothing here),
no relationship declarations, and its creator as its one owner.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from kanban.access.memberships import membership_set
from kanban.models import Membership, Project, ProjectType, Role
from kanban.projects.lifecycle import check_project_name, project_create
from kanban.projects.packages import PACKAGE_FILE, read_package
from kanban.projects.plugin_files import PluginSource, content_type_for, plugin_files_replace
from kanban.projects.plugin_workflow import skeleton_files
from storage.errors import ErrorCode, KanbanError, invalid_argument
from storage.kv import Dataset, kv_set

PLUGINS: Final = Path(settings.BASE_DIR) / "bridge_js" / "plugins"


class Template(StrEnum):
    BOARD = "board"
    INVENTORY = "inventory"
    BLANK = "blank"


#: What the dashboard says of each template, in the order it offers them.
TEMPLATE_LABELS: Final[dict[Template, tuple[str, str]]] = {
    Template.BOARD: ("Board", "Columns and cards, shared by everyone on the board."),
    Template.INVENTORY: ("Inventory", "Items and stock counts that a Board can link to."),
    Template.BLANK: ("Blank plugin", "The starting point for a plugin of your own."),
}


#: The Board plugin's columns key (``kanban.data.board.layout`` reads it from here).
BOARD_COLUMNS_KEY: Final = "board:columns"
#: The columns a Board starts with: the server's one copy of the page's DEFAULT_COLUMNS
#: (bridge_js/plugins/board/board-core.js), which the page writes on opening a board that
#: has none. Written when the board is made, so that an agent or a REST client can add a
#: card before anyone opens it; no WIP limit, which is a team's own choice.
DEFAULT_COLUMNS: Final = (
    {"id": "todo", "title": "To do", "wip": 0},
    {"id": "doing", "title": "Doing", "wip": 0},
    {"id": "done", "title": "Done", "wip": 0},
)


def check_template(template: object) -> Template:
    if not isinstance(template, str) or template not in Template.__members__.values():
        choices = ", ".join(Template)
        raise invalid_argument(
            f"template must be one of {choices}, not {template!r}", field="template"
        )
    return Template(template)


def board_create(*, user: Any, name: object, template: object, columns: bool = True) -> Project:
    """A new kanban project named ``name`` from ``template``, owned by ``user``; a Board
    with its ``DEFAULT_COLUMNS``, unless ``columns`` is False (an import that writes its own
    in the same transaction). Raises ``invalid_argument`` (writing nothing) for a bad name
    or an unknown template, and ``limit_reached`` for a person who owns
    ``KANBAN_MAX_BOARDS_PER_USER`` projects already."""
    checked_name, checked_template = check_project_name(name), check_template(template)
    project_id = uuid.uuid4()
    package_json, entry, files = _template_package(checked_template, checked_name, project_id)
    with transaction.atomic():
        check_board_quota(user=user)
        project = project_create(
            name=checked_name, type=ProjectType.KANBAN, project_id=project_id, kanban_entry=entry
        )
        project.package_json = package_json
        project.save(update_fields=["package_json"])
        plugin_files_replace(project=project, files=files)
        membership_set(user=user, project=project, role=Role.OWNER)
        if checked_template == Template.BOARD and columns:
            _default_columns_write(user=user, project=project)
    return project


def _default_columns_write(*, user: Any, project: Project) -> None:
    source = {"user": user.get_username(), "userId": user.pk, "via": "template"}
    kv_set(
        dataset=Dataset(project.id),
        key=BOARD_COLUMNS_KEY,
        value=[dict(column) for column in DEFAULT_COLUMNS],
        source=source,
        expected_revision=None,
    )


def check_board_quota(*, user: Any) -> None:
    """At most ``KANBAN_MAX_BOARDS_PER_USER`` owned projects per person, archived ones
    included (an administrator has no such limit). Counted under a lock on the person's
    row, so creations at the same moment cannot each find room for one more."""
    if getattr(user, "is_superuser", False):
        return
    limit = settings.KANBAN_MAX_BOARDS_PER_USER
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    owned = Membership.objects.filter(user_id=user.pk, role=Role.OWNER).count()
    if owned >= limit:
        raise KanbanError(
            ErrorCode.LIMIT_REACHED,
            f"you own {owned} boards, the most one person may; delete one, or hand one "
            "over to another owner, to make another",
            limit=limit,
        )


def _template_package(
    template: Template, name: str, project_id: uuid.UUID
) -> tuple[str, str, tuple[PluginSource, ...]]:
    """The new board's package.json text, its entry and its plugin files."""
    if template == Template.BLANK:
        texts = skeleton_files(name=name, project_id=project_id)
        manifest = json.loads(texts.pop(PACKAGE_FILE))
        entry = manifest["steamHarness"]["kanban"]["entry"]
        files = tuple(_source(path, text.encode()) for path, text in texts.items())
    else:
        package = read_package(PLUGINS / template.value)
        manifest = json.loads(package.text)
        entry, files = package.kanban_entry, package.files
    # The template's own id and relationships are the template's, not this board's.
    info = manifest["steamHarness"]["projectInfo"]
    info.update(projectId=str(project_id), name=name, relatedProjects=[])
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", entry, files


def _source(path: str, content: bytes) -> PluginSource:
    return PluginSource(
        path=path,
        content=content,
        content_type=content_type_for(path),
        sha256=hashlib.sha256(content).hexdigest(),
    )
