"""A project written back as a package folder: its package.json, brought up to date from
the database, and its plugin files. Never KV."""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any
from uuid import UUID

from kanban.access.relationships import Declaration, declaration_from_json, declarations_of
from kanban.models import DEFAULT_KANBAN_ENTRY, Project, ProjectType
from kanban.projects.packages import PACKAGE_FILE
from kanban.projects.plugin_files import check_plugin_path
from storage.errors import ErrorCode, KanbanError, invalid_argument


def package_document(project: Project) -> dict[str, Any]:
    """The project's package.json: the one last imported, with ``projectInfo`` (and the
    kanban entry) brought up to date from the database. Declarations that did not change
    since the import keep their original spelling, so an import and export round-trip to
    identical JSON."""
    document: dict[str, Any] = json.loads(project.package_json) if project.package_json else {}
    harness = document.setdefault("steamHarness", {})
    info = harness.setdefault("projectInfo", {})
    info["projectId"] = str(project.id)
    info["name"] = project.name
    info["type"] = project.type
    info["relatedProjects"] = _related_json(info.get("relatedProjects"), declarations_of(project))
    kanban = harness.get("kanban")
    written_entry = kanban.get("entry", DEFAULT_KANBAN_ENTRY) if kanban else DEFAULT_KANBAN_ENTRY
    if project.type == ProjectType.KANBAN and (
        written_entry != project.kanban_entry or not project.package_json
    ):
        harness.setdefault("kanban", {})["entry"] = project.kanban_entry
    return document


def _related_json(original: object, declarations: list[Declaration]) -> list[Any]:
    spelled: dict[Declaration, Any] = {}
    for entry in original if isinstance(original, list) else []:
        parsed = declaration_from_json(entry)
        if parsed is not None:
            spelled.setdefault(parsed, entry)
    return [spelled.get(declaration) or declaration.as_json() for declaration in declarations]


def project_export(
    *, project_id: UUID, path: str | os.PathLike[str], overwrite: bool = False
) -> Path:
    """Write the project's package (package.json and plugin files, never KV) to ``path``,
    which must be missing or empty unless ``overwrite``; files already there that the
    package does not name are left alone."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        raise KanbanError(ErrorCode.NOT_FOUND, f"no project {project_id}")
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise invalid_argument(f"{folder} is not a folder")
    if folder.exists() and any(folder.iterdir()) and not overwrite:
        raise KanbanError(ErrorCode.CONFLICT, f"{folder} is not empty")
    document = package_document(project)
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    (folder / PACKAGE_FILE).write_text(text, encoding="utf-8")
    for plugin_file in project.plugin_files.order_by("path"):
        target = folder.joinpath(*PurePosixPath(check_plugin_path(plugin_file.path)).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(bytes(plugin_file.content))
    return folder
