"""A TypeScript plugin's one build step, on the developer's machine: esbuild turns the entry
its ``package.json`` names into the script its page loads.

``"steamHarness": {"kanban": {"build": {"entry": "app.ts", "outfile": "app.js"}}}`` asks for
it. Only the entry is read: esbuild transforms that one file (types stripped, not checked;
``tsc -p .`` checks them) and bundles nothing, so no ``import`` can pull a file from outside
the package into a script the server then serves. The import commands run it
(``import_project``, ``--watch``, ``startplugin --typescript``); the server never does.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from django.conf import settings

from kanban.projects.packages import PACKAGE_FILE, check_plugin_path
from storage.errors import invalid_argument

#: The repository's own esbuild (``npm ci`` in bridge_js), when the plugin has none.
REPOSITORY_ESBUILD: Final = (
    Path(settings.BASE_DIR) / "bridge_js" / "node_modules" / ".bin" / "esbuild"
)
BUILD_SECONDS: Final = 60
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
        document = json.loads((folder / PACKAGE_FILE).read_text(encoding="utf-8"))
        build = document["steamHarness"]["kanban"]["build"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(build, dict):
        raise invalid_argument("steamHarness.kanban.build must be an object {entry, outfile}")
    entry = check_plugin_path(build.get("entry"), field="steamHarness.kanban.build.entry")
    outfile = check_plugin_path(build.get("outfile"), field="steamHarness.kanban.build.outfile")
    if entry == outfile:
        raise invalid_argument("steamHarness.kanban.build: entry and outfile must differ")
    return BuildStep(entry, outfile)


def plugin_build(*, folder: Path) -> BuildStep | None:
    """Build the package in ``folder`` if it asks for it; raises ``invalid_argument`` with
    each of esbuild's problems as ``file:line:column`` and leaves the outfile as it was."""
    step = plugin_build_step(folder)
    if step is None:
        return None
    esbuild = _esbuild(folder)
    if (folder / step.entry).is_symlink() or not (folder / step.entry).is_file():
        raise invalid_argument(f"steamHarness.kanban.build.entry: {step.entry} is not a file")
    try:
        # No shell; the entry is a checked package path, and "./" keeps it from reading as
        # one of esbuild's options.
        done = subprocess.run(  # noqa: S603
            [esbuild, f"./{step.entry}", "--log-level=error", "--color=false", "--target=es2020"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=BUILD_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise invalid_argument(
            f"esbuild did not finish {step.entry} in {BUILD_SECONDS} s"
        ) from None
    if done.returncode != 0:
        problems = [
            {"path": _one_based(match["where"]), "message": match["message"]}
            for match in _PROBLEM.finditer(done.stderr)
        ] or [{"path": step.entry, "message": done.stderr.strip() or "esbuild failed"}]
        summary = f"{problems[0]['path']}: {problems[0]['message']}"
        if len(problems) > 1:
            summary += f" (and {len(problems) - 1} more)"
        raise invalid_argument(summary, problems=problems)
    target = folder / step.outfile
    if target.is_symlink():
        raise invalid_argument(f"steamHarness.kanban.build.outfile: {step.outfile} is a link")
    # Written only when it changed: --watch would otherwise see its own output as an edit.
    if not target.is_file() or target.read_text(encoding="utf-8") != done.stdout:
        target.write_text(done.stdout, encoding="utf-8")
    return step


def _one_based(where: str) -> str:
    """esbuild counts columns from 0; editors, tsc and people from 1."""
    path, line, column = where.rsplit(":", 2)
    return f"{path}:{line}:{int(column) + 1}"


def _esbuild(folder: Path) -> str:
    for candidate in (folder / "node_modules" / ".bin" / "esbuild", REPOSITORY_ESBUILD):
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("esbuild")
    if found is None:
        raise invalid_argument(
            f"the package is built with esbuild (steamHarness.kanban.build), which is not "
            f"installed: run `npm install` in {folder}"
        )
    return found
