"""Project packages: a folder with a ``package.json`` (and, for a kanban project, the
plugin's files) imported into the database (``exports`` writes one back).

``steamHarness.projectInfo`` gives the project's UUID, name, type and relationship
declarations; ``steamHarness.kanban.entry`` (default ``index.html``) names the plugin page,
and the files in the entry's folder and below that a page may load are the plugin (not the
developer's tests, types, configs, lock files and docs). Storing, serving and versioning
those files is ``kanban.projects.plugin_files``. Neither direction ever touches KV.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Final
from uuid import UUID

from django.db import transaction

from kanban.access.memberships import membership_set
from kanban.access.relationships import (
    Declaration,
    declarations_from_json,
    format_path,
    relationships_set,
)
from kanban.models import DEFAULT_KANBAN_ENTRY, Project, ProjectType, Role
from kanban.projects.lifecycle import check_project_name, check_project_type, project_create
from kanban.projects.package_changes import RELATED_BASE, database_changes_replaced
from kanban.projects.plugin_events import publish_plugin_changed
from kanban.projects.plugin_files import (
    MAX_PLUGIN_FILE_BYTES,
    MAX_PLUGIN_FILES,
    MAX_PLUGIN_TOTAL_BYTES,
    PluginSource,
    check_plugin_path,
    content_type_for,
    plugin_files_replace,
    plugin_versions,
)
from kanban.projects.regular_files import (
    FILE_FLAGS,
    Unreachable,
    Unreadable,
    open_folder,
    read_regular_file,
)
from storage import jsoncodec
from storage.errors import ErrorCode, KanbanError, invalid_argument

PACKAGE_FILE: Final = "package.json"
MAX_PACKAGE_JSON_BYTES: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Package:
    """A package read from disk and fully validated, ready to store."""

    text: str
    project_id: UUID
    name: str
    type: ProjectType
    kanban_entry: str
    declarations: tuple[Declaration, ...]
    files: tuple[PluginSource, ...]


# --- entrypoint declarations ---------------------------------------------------------------

ENTRYPOINT_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
MAX_ENTRYPOINTS: Final = 100


@dataclass(frozen=True, slots=True)
class Entrypoint:
    """One of ``steamHarness.entrypoints``: what a project can run (locally, never here)."""

    id: str
    title: str

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "title": self.title}


def check_entrypoint_id(raw: object, *, field: str = "id") -> str:
    if not isinstance(raw, str) or not ENTRYPOINT_ID_RE.fullmatch(raw):
        raise invalid_argument(
            f"{field} must match {ENTRYPOINT_ID_RE.pattern}, not {raw!r}", field=field
        )
    return raw


def entrypoints_from_json(raw: object, problems: _Problems | None = None) -> list[Entrypoint]:
    """``steamHarness.entrypoints``: ``[{"id", "title"?}]``, ids unique. With ``problems``
    each fault is recorded there; without, a faulty entry is left out."""
    base = "steamHarness.entrypoints"
    found: list[Entrypoint] = []
    if raw is None:
        return found
    if not isinstance(raw, list) or len(raw) > MAX_ENTRYPOINTS:
        if problems is not None:
            problems.add(base, f"must be a list of at most {MAX_ENTRYPOINTS} entrypoints")
        return found
    for index, entry in enumerate(raw):
        path = f"{base}[{index}]"
        try:
            if not isinstance(entry, dict) or set(entry) - {"id", "title", "description"}:
                raise invalid_argument("must be an object with an id (and a title)")
            entry_id = check_entrypoint_id(entry.get("id"))
            title = entry.get("title", entry_id)
            if not isinstance(title, str) or len(title) > 200:
                raise invalid_argument("title must be text of at most 200 characters")
            if entry_id in {e.id for e in found}:
                raise invalid_argument(f"id {entry_id!r} is declared twice")
        except KanbanError as error:
            if problems is not None:
                problems.add(path, error.message)
            continue
        found.append(Entrypoint(entry_id, title))
    return found


def declared_entrypoints(project: Project) -> list[Entrypoint]:
    """The entrypoints the project's last imported package declares."""
    try:
        harness = json.loads(project.package_json).get("steamHarness", {})
    except (ValueError, AttributeError):
        return []
    return entrypoints_from_json(harness.get("entrypoints") if isinstance(harness, dict) else None)


# --- import ----------------------------------------------------------------------------------


class _Problems:
    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.items.append({"path": path, "message": message})

    def error(self) -> KanbanError:
        summary = f"{self.items[0]['path']}: {self.items[0]['message']}"
        if len(self.items) > 1:
            summary += f" (and {len(self.items) - 1} more)"
        return invalid_argument(summary, problems=list(self.items))


def read_package(folder: Path) -> Package:
    """Read and validate a package folder without touching the database. Raises
    ``invalid_argument`` listing every problem with its JSON path (or file path)."""
    problems = _Problems()
    if not folder.is_dir():
        problems.add(str(folder), "is not a folder")
        raise problems.error()
    raw = _read_manifest(folder, problems)
    if raw is None:
        raise problems.error()
    try:
        text = raw.decode("utf-8")
        json.loads(text)  # for the place of a syntax error: line and column, not an offset
        document = jsoncodec.decode(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        problems.add(PACKAGE_FILE, f"is not JSON: {error.msg} at {where}")
        raise problems.error() from None
    except (UnicodeDecodeError, KanbanError, RecursionError) as error:
        problems.add(PACKAGE_FILE, str(error))
        raise problems.error() from None

    if not isinstance(document, dict):
        problems.add(PACKAGE_FILE, "must hold a JSON object")
        raise problems.error()
    harness = _object_at(document, ("steamHarness",), problems)
    info = _object_at(harness, ("steamHarness", "projectInfo"), problems)
    if info is None:
        raise problems.error()
    project_id = _project_id(info.get("projectId"), problems)
    name = _checked(check_project_name, info.get("name"), "name", problems)
    project_type = _checked(check_project_type, info.get("type"), "type", problems)
    declarations: list[Declaration] = []
    if project_id is not None:
        declarations, found = declarations_from_json(
            info.get("relatedProjects", []), project_id=project_id
        )
        for problem in found:
            problems.add(format_path(RELATED_BASE, problem.path), problem.message)

    entry = DEFAULT_KANBAN_ENTRY
    files: tuple[PluginSource, ...] = ()
    kanban = _object_at(harness, ("steamHarness", "kanban"), problems, required=False)
    if kanban is not None and "entry" in kanban:
        try:
            entry = check_plugin_path(kanban["entry"], field="steamHarness.kanban.entry")
        except KanbanError as error:
            problems.add("steamHarness.kanban.entry", error.message)
    if project_type == ProjectType.KANBAN and not problems.items:
        files = _plugin_sources(folder, entry, problems)
    if isinstance(harness, dict):
        entrypoints_from_json(harness.get("entrypoints"), problems)

    if problems.items:
        raise problems.error()
    assert project_id is not None and name is not None and project_type is not None
    return Package(
        text=text,
        project_id=project_id,
        name=name,
        type=project_type,
        kanban_entry=entry,
        declarations=tuple(declarations),
        files=files,
    )


def _read_manifest(folder: Path, problems: _Problems) -> bytes | None:
    """package.json's bytes, opened without following a link (as every plugin file is)."""
    manifest = folder / PACKAGE_FILE
    try:
        return read_regular_file(
            lambda: os.open(manifest, FILE_FLAGS),
            limit=MAX_PACKAGE_JSON_BYTES,
            missing="is missing",
            unopened=lambda: "is a link" if manifest.is_symlink() else "cannot be read",
            irregular="is not a regular file",
        )
    except Unreadable as refusal:
        problems.add(PACKAGE_FILE, refusal.reason)
        return None


def _object_at(
    parent: object, path: tuple[str, ...], problems: _Problems, *, required: bool = True
) -> dict[str, Any] | None:
    """The object at ``path``; ``parent`` is what holds its last part (already checked)."""
    if not isinstance(parent, dict) or (not required and path[-1] not in parent):
        return None
    found = parent.get(path[-1])
    if not isinstance(found, dict):
        problems.add(".".join(path), "must be a JSON object")
        return None
    return found


def _project_id(raw: object, problems: _Problems) -> UUID | None:
    where = "steamHarness.projectInfo.projectId"
    if not isinstance(raw, str):
        problems.add(where, "projectId is required and must be a UUID string")
        return None
    try:
        return UUID(raw)
    except ValueError:
        problems.add(where, f"projectId {raw!r} is not a UUID")
        return None


def _checked(check: Any, raw: object, field: str, problems: _Problems) -> Any:
    try:
        return check(raw)
    except KanbanError as error:
        problems.add(f"steamHarness.projectInfo.{field}", error.message)
        return None


#: What a package holds for its developer and no page loads: tests, the test host, types
#: and TypeScript sources (the page loads the built script), tools' configs and lock files,
#: and docs. Served, they told anyone the plugin's internals, and a lock file or a test
#: fixture could pass the size limits the page itself keeps to.
_DEVELOPER_FOLDERS: Final = frozenset({"node_modules", "test", "tests", "__tests__"})
_DEVELOPER_FILES: Final = re.compile(
    r"""
    .+\.(test|spec)\.[^.]+
    | kanban-testing\.mjs
    | .+\.[cm]?tsx?
    | package\.json | package-lock\.json | npm-shrinkwrap\.json
    | yarn\.lock | pnpm-lock\.yaml | bun\.lockb?
    | [jt]sconfig(\..+)?\.json
    | (eslint|prettier|stylelint|babel|postcss|tailwind|vite|vitest|jest|playwright|rollup
       |webpack|esbuild)\.config\..+
    | (readme|changelog)(\..+)?
    """,
    re.IGNORECASE | re.VERBOSE,
)


def _served(name: str, *, folder: bool) -> bool:
    """Whether a file or folder of the package is part of what a page may load; hidden
    ones (``.git``, ``.DS_Store``, ``.eslintrc``) never are."""
    if name.startswith("."):
        return False
    if folder:
        return name.lower() not in _DEVELOPER_FOLDERS
    return not _DEVELOPER_FILES.fullmatch(name)


def _plugin_sources(folder: Path, entry: str, problems: _Problems) -> tuple[PluginSource, ...]:
    """The entry and what its page may load: every file in the entry's folder and below
    but the developer's own (``_DEVELOPER_FILES``, ``_DEVELOPER_FOLDERS``) and hidden ones;
    links and special files are refused."""
    entry_parent = PurePosixPath(entry).parent
    try:
        root = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        problems.add(str(folder), "is not a folder")
        return ()
    try:
        base = _open_folder(root, entry_parent.parts, problems)
        if base is None:
            return ()
        try:
            sources = _walk(base, PurePosixPath(*entry_parent.parts), entry, problems)
        finally:
            os.close(base)
    finally:
        os.close(root)
    if sources is None:
        return ()
    if entry not in {source.path for source in sources}:
        problems.add("steamHarness.kanban.entry", f"entry file {entry!r} is missing")
    return tuple(sources)


def _open_folder(root: int, parts: tuple[str, ...], problems: _Problems) -> int | None:
    """A descriptor of the entry's folder, reached from the package's one part at a time
    without following a link (a link to ../../outside would lead out of the package)."""
    try:
        return open_folder(root, parts)
    except Unreachable as refusal:
        problems.add("steamHarness.kanban.entry", f"folder {'/'.join(parts)!r} {refusal.what}")
        return None


def _walk(
    base: int, prefix: PurePosixPath, entry: str, problems: _Problems
) -> list[PluginSource] | None:
    sources: list[PluginSource] = []
    total = 0
    for current, dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=base, follow_symlinks=False):
        here = prefix.joinpath(*PurePosixPath(current).parts)
        dirnames[:] = sorted(name for name in dirnames if _served(name, folder=True))
        for filename in sorted(filenames):
            relative = (here / filename).as_posix()
            if relative != entry and not _served(filename, folder=False):
                continue
            try:
                check_plugin_path(relative)
            except KanbanError as error:
                problems.add(relative, error.message)
                continue
            content = _read_file(dir_fd, filename, relative, problems)
            if content is None:
                continue
            total += len(content)
            if len(sources) >= MAX_PLUGIN_FILES or total > MAX_PLUGIN_TOTAL_BYTES:
                problems.add(
                    str(prefix),
                    f"a plugin is at most {MAX_PLUGIN_FILES} files and "
                    f"{MAX_PLUGIN_TOTAL_BYTES} bytes",
                )
                return None
            sources.append(
                PluginSource(
                    path=relative,
                    content=content,
                    content_type=content_type_for(relative),
                    sha256=hashlib.sha256(content).hexdigest(),
                )
            )
    return sources


def _read_file(dir_fd: int, name: str, relative: str, problems: _Problems) -> bytes | None:
    """A regular file's bytes, opened by its folder's descriptor and never through a link
    (a link to a folder is no folder here: ``fwalk`` lists it as a file, and it is refused);
    what it is, and its size, are read from the opened file itself."""
    refused = "only regular files are imported (no links)"
    try:
        return read_regular_file(
            lambda: os.open(name, FILE_FLAGS, dir_fd=dir_fd),
            limit=MAX_PLUGIN_FILE_BYTES,
            missing="vanished while it was read",
            unopened=lambda: refused,
            irregular=refused,
        )
    except Unreadable as refusal:
        problems.add(relative, refusal.reason)
        return None


def project_import(
    *,
    path: str | os.PathLike[str],
    replace_database_changes: bool = False,
    owner: Any | None = None,
) -> Project:
    """Create or update the project a package describes: name, type, entry, declarations
    and plugin files, in one transaction. KV is left alone, and memberships too, but that a
    project the import creates gets ``owner`` (when given) as its owner, so it never starts
    ownerless. An invalid package raises ``invalid_argument`` (every problem in
    ``details["problems"]``) and changes nothing.

    An update never silently undoes what was changed in the database (admin, REST) since
    the last import: it raises ``conflict`` naming each such change the package would
    replace, unless ``replace_database_changes``. ``project_export`` writes them back into
    a package."""
    package = read_package(Path(path))
    with transaction.atomic():
        project = Project.objects.select_for_update().filter(pk=package.project_id).first()
        before = plugin_versions(project_ids=[package.project_id]).get(package.project_id)
        if project is not None and not replace_database_changes:
            problems = database_changes_replaced(project, package)
            if problems:
                raise KanbanError(
                    ErrorCode.CONFLICT,
                    f"the package would replace {len(problems)} change(s) made in the "
                    "database since the last import",
                    problems=problems,
                )
        created = project is None
        if project is None:
            project = project_create(
                name=package.name, type=package.type, project_id=package.project_id
            )
        if created and owner is not None:
            membership_set(user=owner, project=project, role=Role.OWNER)
        project.name = package.name
        project.type = package.type
        project.kanban_entry = package.kanban_entry
        project.package_json = package.text
        project.save(update_fields=["name", "type", "kanban_entry", "package_json", "updated_at"])
        relationships_set(project=project, declarations=package.declarations)
        plugin_files_replace(project=project, files=package.files)
        after = plugin_versions(project_ids=[project.id])[project.id]
        if before is not None and after != before:
            # Open boards of this project load the new files (kanban.bridge.publish).
            publish_plugin_changed(project_id=project.id, version=after)
    return project
