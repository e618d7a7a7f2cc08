"""The JS bridge's own suite runs under node; this makes it part of every pytest run.

Without node the tests skip with a reason, unless ``KANBAN_REQUIRE_NODE=1`` says node is
part of this environment, in which case its absence is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BRIDGE = ROOT / "bridge_js"


def node_or_skip() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("KANBAN_REQUIRE_NODE") == "1":
            pytest.fail("node is not on PATH and KANBAN_REQUIRE_NODE=1")
        pytest.skip("node is not on PATH (set KANBAN_REQUIRE_NODE=1 to make this a failure)")
    return node


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node_or_skip(), *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_node_suite_passes() -> None:
    result = run("--test", "bridge_js/tests/")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "# fail 0" in result.stdout
    assert "# pass 0\n" not in result.stdout


def test_the_committed_bundles_match_the_sources() -> None:
    result = run("bridge_js/build.mjs", "--check")
    assert result.returncode == 0, result.stderr


def test_the_bundles_are_served_from_the_bridge_static_prefix() -> None:
    from django.conf import settings

    assert ("bridge", BRIDGE / "dist") in [
        (prefix, Path(path)) for prefix, path in settings.STATICFILES_DIRS
    ]
    for name in ("kanban.js", "host.js", "kanban.d.ts"):
        assert (BRIDGE / "dist" / name).is_file(), name
