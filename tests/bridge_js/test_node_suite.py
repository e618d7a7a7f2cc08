"""The JS bridge's own suite runs under node; this makes it part of every pytest run.

The build also needs esbuild and terser, which ``npm ci`` installs into
``bridge_js/node_modules``. Without node the tests skip with a reason; without the build
tools the build check skips and the node suite runs with its build tests skipped. Unless
``KANBAN_REQUIRE_NODE=1`` says node and the tools are part of this environment: then their
absence is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
BRIDGE = ROOT / "bridge_js"
BUILD_TOOLS = ("esbuild", "terser")


def missing(reason: str) -> NoReturn:
    if os.environ.get("KANBAN_REQUIRE_NODE") == "1":
        pytest.fail(reason + " and KANBAN_REQUIRE_NODE=1")
    pytest.skip(reason + " (set KANBAN_REQUIRE_NODE=1 to make this a failure)")


def node_or_skip() -> str:
    node = shutil.which("node")
    if node is None:
        missing("node is not on PATH")
    return node


def absent_build_tools() -> str | None:
    absent = [t for t in BUILD_TOOLS if not (BRIDGE / "node_modules" / t).is_dir()]
    return " and ".join(absent) + " not installed: run `npm ci` in bridge_js" if absent else None


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node_or_skip(), *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )


#: node's own suite, a pytest test a file: node runs the files of one ``--test`` one at a
#: time on two cores, and xdist spreads these over its workers.
SUITE_FILES = sorted(p.relative_to(ROOT).as_posix() for p in (BRIDGE / "tests").rglob("*.test.mjs"))
#: The build's own test (esbuild and terser over every bundle) and the vendored Markdown
#: parser's: 27 s of the suite's 38 on a quiet machine.
LONG_FILES = {
    "bridge_js/tests/build.test.mjs",
    "bridge_js/tests/plugins/board-markdown-vendor.test.mjs",
}


def test_the_node_suite_is_found() -> None:
    assert len(SUITE_FILES) >= 20, SUITE_FILES
    assert set(SUITE_FILES) >= LONG_FILES


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=[pytest.mark.long] if p in LONG_FILES else []) for p in SUITE_FILES],
)
def test_the_node_suite_passes(path: str) -> None:
    node_or_skip()
    absent = absent_build_tools()
    if absent and os.environ.get("KANBAN_REQUIRE_NODE") == "1":
        missing(absent)
    result = run("--test", path)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "# fail 0" in result.stdout
    assert "# pass 0\n" not in result.stdout


def test_the_committed_bundles_match_the_sources() -> None:
    node_or_skip()
    absent = absent_build_tools()
    if absent:
        missing(absent)
    result = run("bridge_js/build.mjs", "--check")
    assert result.returncode == 0, result.stderr


def test_the_bundles_are_served_from_the_bridge_static_prefix() -> None:
    from django.conf import settings
    from django.contrib.staticfiles import finders

    dirs = [(prefix, Path(path)) for prefix, path in settings.STATICFILES_DIRS]
    assert ("bridge", BRIDGE / "dist") in dirs
    assert ("bridge", BRIDGE / "static" / "bridge") in dirs
    for name in ("kanban.js", "host.js", "testing.mjs"):
        assert (BRIDGE / "dist" / name).is_file(), name
    # The types are served from their one source, not a copy in dist.
    assert not (BRIDGE / "dist" / "kanban.d.ts").exists()
    found = finders.find("bridge/kanban.d.ts")
    assert found is not None and Path(found) == BRIDGE / "static" / "bridge" / "kanban.d.ts"


def test_a_new_plugin_type_checks_strictly_and_passes_its_own_tests_with_no_edits(
    tmp_path: Path,
) -> None:
    """``startplugin``'s skeleton ships a tsconfig.json (checkJs, strict) and the SDK's
    declarations: ``npx tsc -p .`` in the new folder passes as it is; and its own
    test, on the plugin test host with no server, passes under ``node --test``: a third
    party starts from a folder that type-checks and tests before they change a line."""
    import uuid

    from kanban.projects.plugin_workflow import skeleton_files

    tsc = BRIDGE / "node_modules" / ".bin" / "tsc"
    node_or_skip()
    if not tsc.exists():
        missing("typescript is not installed: run `npm ci` in bridge_js")
    for name, text in skeleton_files(name="My counter", project_id=uuid.uuid4()).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    checked = subprocess.run(
        [str(tsc), "-p", "."], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = subprocess.run(
        [node_or_skip(), "--test"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert tested.returncode == 0 and "# pass 2" in tested.stdout, tested.stdout + tested.stderr
    # Not vacuous: the same check refuses the skeleton's old `values.step > 0` unnarrowed.
    app = tmp_path / "app.js"
    app.write_text(app.read_text().replace('typeof wanted === "number" && ', ""))
    failed = subprocess.run(
        [str(tsc), "-p", "."], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert failed.returncode != 0 and "app.js" in failed.stdout
