"""The plugin developer's workflow: ``startplugin`` writes a working plugin package, and
``import_project --watch`` imports it again whenever one of its files changes (open boards
then reload, see ``kanban.projects.plugin_events``)."""

from __future__ import annotations

import html
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from django.conf import settings

from kanban.models import DEFAULT_KANBAN_ENTRY, Project, ProjectType
from kanban.projects.lifecycle import check_project_name
from kanban.projects.packages import PACKAGE_FILE, project_import
from kanban.projects.plugin_build import esbuild_program, plugin_build, plugin_build_step
from storage.errors import ErrorCode, KanbanError, invalid_argument

SKELETON: Final = Path(settings.BASE_DIR) / "kanban" / "projects" / "plugin_skeleton"
#: Files copied from the skeleton, with ``__PLUGIN_*__`` and ``__PROJECT_ID__`` filled in.
SKELETON_FILES: Final = (
    "index.html",
    "app.js",
    "style.css",
    "README.md",
    "tsconfig.json",
    "app.test.mjs",
)
#: The SDK's types (bridge_js/static/bridge, served as written), beside the skeleton's code:
#: ``tsc -p .`` in a new plugin folder checks app.js against them with no edits and no
#: install of the SDK.
SDK_TYPES: Final = Path(settings.BASE_DIR) / "bridge_js" / "static" / "bridge" / "kanban.d.ts"
#: The plugin test host with the SDK inside (bridge_js/testing/host.mjs, built), which the
#: skeleton's own test imports from its folder: ``node --test`` runs it with no server.
TEST_HOST: Final = Path(settings.BASE_DIR) / "bridge_js" / "dist" / "testing.mjs"
WATCH_INTERVAL: Final = 0.5
#: The SDK's own build manifest, whose tool versions a TypeScript plugin gets.
SDK_PACKAGE: Final = Path(settings.BASE_DIR) / "bridge_js" / "package.json"
_T = TypeVar("_T")


def _typescript_tools() -> dict[str, str]:
    """esbuild and typescript at the versions the SDK's own build uses. Read when a
    TypeScript skeleton is written, not when a worker imports this module."""
    tools = json.loads(SDK_PACKAGE.read_text(encoding="utf-8"))["devDependencies"]
    return {tool: tools[tool] for tool in ("esbuild", "typescript")}


# --- startplugin ------------------------------------------------------------------------------


def _package_name(name: str) -> str:
    """An npm-style package name from the display name: lowercase, dashes."""
    slug = "".join(char if char.isalnum() else "-" for char in name.lower())
    return "-".join(part for part in slug.split("-") if part) or "kanban-plugin"


def skeleton_files(*, name: str, project_id: uuid.UUID, typescript: bool = False) -> dict[str, str]:
    """The skeleton package of a plugin named ``name``: ``package.json`` (with that project
    id and no relationships) and the files of ``SKELETON_FILES``, filled in. With
    ``typescript``, ``app.ts`` replaces ``app.js``, which esbuild makes from it on import."""
    kanban: dict[str, Any] = {"entry": DEFAULT_KANBAN_ENTRY}
    package: dict[str, Any] = {"name": _package_name(name), "version": "0.1.0", "private": True}
    if typescript:
        kanban["build"] = {"entry": "app.ts", "outfile": "app.js"}
        package["scripts"] = {"check": "tsc -p .", "test": "node --test"}
        package["devDependencies"] = _typescript_tools()
    package["steamHarness"] = {
        "projectInfo": {
            "projectId": str(project_id),
            "name": name,
            "type": ProjectType.KANBAN.value,
            "relatedProjects": [],
        },
        "kanban": kanban,
    }
    files = {
        PACKAGE_FILE: json.dumps(package, indent=2, ensure_ascii=False) + "\n",
        "kanban.d.ts": SDK_TYPES.read_text(encoding="utf-8"),
        "kanban-testing.mjs": TEST_HOST.read_text(encoding="utf-8"),
    }
    for filename in SKELETON_FILES:
        if typescript and filename == "app.js":
            filename = "app.ts"
        source = SKELETON / "typescript" / filename if typescript else SKELETON / filename
        if not source.is_file():
            source = SKELETON / filename
        template = source.read_text(encoding="utf-8")
        title = html.escape(name) if filename.endswith(".html") else name
        files[filename] = (
            template.replace("__PLUGIN_TITLE__", title)
            .replace("__PLUGIN_NAME__", name)
            .replace("__PROJECT_ID__", str(project_id))
        )
    return files


@dataclass(frozen=True, slots=True)
class PluginStart:
    """A new plugin package, checked: ``plugin_create`` can write it."""

    name: str
    folder: Path
    typescript: bool


def check_plugin_start(
    *, name: object, path: str | os.PathLike[str] | None = None, typescript: bool = False
) -> PluginStart:
    """Everything a new plugin needs, checked before anything is written: its name, a folder
    that is missing or empty (default ``./<name>``), and esbuild for a TypeScript one. A
    refusal here leaves no folder behind, so the same command can simply be run again."""
    name = check_project_name(name)
    if path is None:
        if Path(name).name != name or name.startswith("."):
            raise invalid_argument(f"{name!r} cannot be a folder name; give DIR explicitly")
        path = name
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise invalid_argument(f"{folder} is not a folder")
    if folder.exists() and any(folder.iterdir()):
        raise KanbanError(ErrorCode.CONFLICT, f"{folder} is not empty")
    if typescript:
        esbuild_program()
    return PluginStart(name=name, folder=folder, typescript=typescript)


def plugin_start(
    *, name: str, path: str | os.PathLike[str] | None = None, typescript: bool = False
) -> Path:
    """Write a new plugin package named ``name`` into ``path`` (default ``./<name>``), which
    must be missing or empty. The package gets a fresh project id and no relationships; a
    TypeScript one is built once, so that it imports as it is. Nothing stays written if a
    step fails."""
    start = check_plugin_start(name=name, path=path, typescript=typescript)
    _write_package(start, then=lambda folder: plugin_build(folder=folder))
    return start.folder


def plugin_create(*, start: PluginStart, owner: Any | None = None) -> Project:
    """``startplugin``: write the package and create its project, owned by ``owner``, all or
    nothing: when the build or the import fails, what was written is removed and no project
    is made."""
    return _write_package(
        start, then=lambda folder: project_build_and_import(path=folder, owner=owner)
    )


def project_build_and_import(
    *,
    path: str | os.PathLike[str],
    replace_database_changes: bool = False,
    owner: Any | None = None,
) -> Project:
    """Build the package's plugin when it declares a build (``plugin_build``), then import
    the package (``project_import``): what ``import_project`` does, once or at each change
    ``--watch`` sees, and ``startplugin`` for the package it wrote. A failed build imports
    nothing: the files a board loads are never older than the sources beside them."""
    plugin_build(folder=Path(path))
    return project_import(path=path, replace_database_changes=replace_database_changes, owner=owner)


def _write_package(start: PluginStart, *, then: Callable[[Path], _T]) -> _T:
    files = skeleton_files(name=start.name, project_id=uuid.uuid4(), typescript=start.typescript)
    made = _first_missing(start.folder)
    written = [start.folder / filename for filename in files]
    try:
        start.folder.mkdir(parents=True, exist_ok=True)
        for target, text in zip(written, files.values(), strict=True):
            target.write_text(text, encoding="utf-8")
        step = plugin_build_step(start.folder)
        if step is not None:
            written.append(start.folder / step.outfile)
        return then(start.folder)
    except BaseException:
        # A rerun of the same command must find the folder as it was: missing, or empty.
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        else:
            for target in written:
                target.unlink(missing_ok=True)
        raise


def _first_missing(folder: Path) -> Path | None:
    """The outermost folder that making ``folder`` creates (None: ``folder`` exists)."""
    missing = None
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            break
        missing = candidate
    return missing


# --- import_project --watch -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WatchImport:
    """One import attempt: the project, or the error that left everything unchanged."""

    project: Project | None
    error: KanbanError | None = None


#: relative path -> (mtime in ns, size); hidden files and folders are not part of a package.
Snapshot = dict[str, tuple[int, int]]


def package_snapshot(folder: Path) -> Snapshot:
    """What ``--watch`` compares: every file but hidden ones, ``node_modules`` and the build's
    own output (writing it is no edit of the developer's)."""
    try:
        step = plugin_build_step(folder)
    except KanbanError:
        step = None
    found: Snapshot = {}
    for current, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "node_modules")
        for filename in filenames:
            if filename.startswith("."):
                continue
            file_path = Path(current) / filename
            relative = file_path.relative_to(folder).as_posix()
            if step is not None and relative == step.outfile:
                continue
            try:
                info = file_path.stat()
            except FileNotFoundError:
                continue  # removed while we looked; the next poll sees it gone
            found[relative] = (info.st_mtime_ns, info.st_size)
    return found


def _attempt(folder: Path, replace: bool, owner: Any | None) -> WatchImport:
    try:
        project = project_build_and_import(
            path=folder, replace_database_changes=replace, owner=owner
        )
        return WatchImport(project=project)
    except KanbanError as error:
        return WatchImport(project=None, error=error)
    except OSError as error:
        # An editor's temporary file vanished, or a folder moved, while the import read the
        # package: report it and keep watching; the next change is tried again.
        changed = invalid_argument(f"the package changed while it was read ({error.strerror})")
        return WatchImport(project=None, error=changed)
    except UnicodeError as error:
        # A file or a name of the package that is no UTF-8 and that a check above missed:
        # a problem of the package, which the next save may fix, not the end of watching.
        odd = invalid_argument(f"the package holds something that is not UTF-8 ({error})")
        return WatchImport(project=None, error=odd)


def project_import_watch(
    *,
    path: str | os.PathLike[str],
    polls: int | None = None,
    interval: float = WATCH_INTERVAL,
    wait: Callable[[float], None] = time.sleep,
    replace_database_changes: bool = False,
    owner: Any | None = None,
) -> Iterator[WatchImport]:
    """Import the package now, then look at its files every ``interval`` seconds and import
    it again after any change (a file added, removed or saved), yielding every attempt.

    A failed import changed nothing (``project_import`` is all or nothing); watching goes
    on, and the next change is tried again. ``polls`` bounds the number of looks (``None``:
    forever); ``wait`` is how the time between two looks passes."""
    folder = Path(path)
    seen = package_snapshot(folder)
    yield _attempt(folder, replace_database_changes, owner)
    done = 0
    while polls is None or done < polls:
        wait(interval)
        done += 1
        now = package_snapshot(folder)
        if now != seen:
            seen = now
            yield _attempt(folder, replace_database_changes, owner)
