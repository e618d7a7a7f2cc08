"""A TypeScript plugin's one build step, on the developer's machine: esbuild turns the entry
its ``package.json`` names into the script its page loads.

``"steamHarness": {"kanban": {"build": {"entry": "app.ts", "outfile": "app.js"}}}`` asks for
it. The build runs nothing from the package and touches nothing outside it: esbuild is the
repository's pinned one (``settings.KANBAN_ESBUILD``), never one the package ships (a clone
keeps a ``node_modules/.bin/esbuild``'s run bit); the entry is read the way every package
file is (no link on any part of its path) and handed to esbuild as content, so esbuild
opens no path and bundles nothing (no ``import`` pulls a file from outside the package into
a script the server then serves); types are stripped, not checked (``tsc -p .`` checks
them); the outfile is written below the package folder's descriptor, never through a link.
The import commands run it (``import_project``, ``--watch``, ``startplugin --typescript``);
the server never does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from django.conf import settings

from kanban.projects.packages import MAX_PACKAGE_JSON_BYTES, PACKAGE_FILE
from kanban.projects.plugin_files import MAX_PLUGIN_FILE_BYTES, check_plugin_path
from kanban.projects.regular_files import (
    FILE_FLAGS,
    Unreachable,
    Unreadable,
    is_link,
    open_folder,
    read_regular_file,
    write_regular_file,
)
from storage.errors import KanbanError, invalid_argument

BUILD_SECONDS: Final = 60
_ENTRY: Final = "steamHarness.kanban.build.entry"
_OUTFILE: Final = "steamHarness.kanban.build.outfile"
#: esbuild's loader for each kind of entry it may build: code only (its json, text and
#: file loaders would make any file a module).
_LOADERS: Final = {".ts": "ts", ".tsx": "tsx", ".js": "js"}
#: One of esbuild's problems (``--color=false``): "✘ [ERROR] message", a blank line, then
#: "file:line:column:" (the column from 0) and the source line.
_PROBLEM: Final = re.compile(
    r"\[ERROR\] (?P<message>[^\n]+)\n\s*\n\s+(?P<where>[^\s]+:\d+:\d+):", re.M
)


@dataclass(frozen=True, slots=True)
class BuildStep:
    entry: str
    outfile: str


def plugin_build_step(folder: Path) -> BuildStep | None:
    """The build the package asks for, or None. A package.json that cannot be read is left
    to the import, which reports every problem it has."""
    try:
        manifest = read_regular_file(
            lambda: os.open(folder / PACKAGE_FILE, FILE_FLAGS),
            limit=MAX_PACKAGE_JSON_BYTES,
            missing="is missing",
            unopened=lambda: "cannot be read",
            irregular="is not a regular file",
        )
        build = json.loads(manifest.decode("utf-8"))["steamHarness"]["kanban"]["build"]
    except (Unreadable, ValueError, KeyError, TypeError, RecursionError):
        return None
    if not isinstance(build, dict):
        raise invalid_argument("steamHarness.kanban.build must be an object {entry, outfile}")
    entry = check_plugin_path(build.get("entry"), field=_ENTRY)
    outfile = check_plugin_path(build.get("outfile"), field=_OUTFILE)
    if entry == outfile:
        raise invalid_argument("steamHarness.kanban.build: entry and outfile must differ")
    if PurePosixPath(entry).suffix not in _LOADERS:
        raise invalid_argument(f"{_ENTRY}: {entry} must be a .ts, .tsx or .js file", field=_ENTRY)
    return BuildStep(entry, outfile)


def plugin_build(*, folder: Path) -> BuildStep | None:
    """Build the package in ``folder`` if it asks for it; raises ``invalid_argument`` with
    each of esbuild's problems as ``file:line:column`` (or what else is wrong: a link on
    the way to the entry or the outfile, output that is no script) and leaves the outfile
    as it was."""
    step = plugin_build_step(folder)
    if step is None:
        return None
    esbuild = esbuild_program()
    try:
        root = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        raise invalid_argument(f"{folder} is not a folder") from None
    try:
        source = _read_entry(root, step.entry)
        script = _run(esbuild, source, step.entry)
        _write_outfile(root, step.outfile, script)
    finally:
        os.close(root)
    return step


def esbuild_program() -> str:
    """The one esbuild every build runs (absolute: the build's working folder is no part
    of finding it); ``invalid_argument`` saying how to install it when it is missing."""
    program = Path(settings.KANBAN_ESBUILD).absolute()
    if not program.is_file():
        raise invalid_argument(
            f"the package is built with esbuild (steamHarness.kanban.build), which is not "
            f"installed at {program}: run `npm ci --prefix bridge_js` in the repository, or "
            f"set KANBAN_ESBUILD to its absolute path"
        )
    return str(program)


def _read_entry(root: int, entry: str) -> str:
    *parents, name = PurePosixPath(entry).parts
    try:
        folder = open_folder(root, parents)
    except Unreachable as refusal:
        raise invalid_argument(f"{_ENTRY}: {refusal.where} {refusal.what}", field=_ENTRY) from None
    try:
        content = read_regular_file(
            lambda: os.open(name, FILE_FLAGS, dir_fd=folder),
            limit=MAX_PLUGIN_FILE_BYTES,
            missing="is missing",
            unopened=lambda: "is a link" if is_link(folder, [name]) else "cannot be read",
            irregular="is not a file",
        )
    except Unreadable as refusal:
        raise invalid_argument(f"{_ENTRY}: {entry} {refusal.reason}", field=_ENTRY) from None
    finally:
        os.close(folder)
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        raise invalid_argument(f"{_ENTRY}: {entry} is not UTF-8 text", field=_ENTRY) from None


def _run(esbuild: str, source: str, entry: str) -> str:
    """esbuild's transform of ``source``, read from its stdin: it opens no file (and no
    tsconfig.json); ``--sourcefile`` names the entry in its problems."""
    loader = _LOADERS[PurePosixPath(entry).suffix]
    try:
        # No shell, and every argument is ours: the entry is a checked package path.
        done = subprocess.run(  # noqa: S603
            [
                esbuild,
                f"--loader={loader}",
                f"--sourcefile={entry}",
                "--log-level=error",
                "--color=false",
                "--target=es2020",
            ],
            input=source.encode("utf-8"),
            capture_output=True,
            timeout=BUILD_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise invalid_argument(f"esbuild did not finish {entry} in {BUILD_SECONDS} s") from None
    except OSError as error:
        raise invalid_argument(f"esbuild ({esbuild}) did not run: {error.strerror}") from None
    if done.returncode != 0:
        raise _problems(done.stderr.decode("utf-8", errors="replace"), entry)
    if len(done.stdout) > MAX_PLUGIN_FILE_BYTES:
        raise invalid_argument(
            f"{_OUTFILE}: esbuild's output is larger than {MAX_PLUGIN_FILE_BYTES} bytes, "
            "a plugin file's limit",
            field=_OUTFILE,
        )
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise invalid_argument(
            f"{_OUTFILE}: esbuild's output is not UTF-8 text", field=_OUTFILE
        ) from None


def _problems(stderr: str, entry: str) -> KanbanError:
    problems = [
        {"path": _one_based(match["where"]), "message": match["message"]}
        for match in _PROBLEM.finditer(stderr)
    ] or [{"path": entry, "message": stderr.strip() or "esbuild failed"}]
    summary = f"{problems[0]['path']}: {problems[0]['message']}"
    if len(problems) > 1:
        summary += f" (and {len(problems) - 1} more)"
    return invalid_argument(summary, problems=problems)


def _one_based(where: str) -> str:
    """esbuild counts columns from 0; editors, tsc and people from 1."""
    path, line, column = where.rsplit(":", 2)
    return f"{path}:{line}:{int(column) + 1}"


def _write_outfile(root: int, outfile: str, script: str) -> None:
    """Written only when it changed: --watch would otherwise see its own output as an
    edit. Missing folders on its way are made, as the package's own."""
    *parents, name = PurePosixPath(outfile).parts
    try:
        folder = open_folder(root, parents, create=True)
    except Unreachable as refusal:
        raise invalid_argument(
            f"{_OUTFILE}: {refusal.where} {refusal.what}", field=_OUTFILE
        ) from None
    try:
        write_regular_file(folder, name, script.encode("utf-8"))
    except Unreadable as refusal:
        raise invalid_argument(f"{_OUTFILE}: {outfile} {refusal.reason}", field=_OUTFILE) from None
    except OSError as error:
        raise invalid_argument(
            f"{_OUTFILE}: {outfile} could not be written ({error.strerror})", field=_OUTFILE
        ) from None
    finally:
        os.close(folder)
