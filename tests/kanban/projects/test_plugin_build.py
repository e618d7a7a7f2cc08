"""A TypeScript plugin: ``startplugin --typescript`` writes ``app.ts``, and every import
command builds ``app.js`` from it with esbuild first. The new folder type-checks strictly
and passes its own test as it is; a syntax error is reported where it is and imports
nothing; ``--watch`` rebuilds after an edit of the source and never takes its own output
for an edit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from kanban.models import PluginFile, Project
from kanban.projects.plugin_build import REPOSITORY_ESBUILD, plugin_build
from kanban.projects.plugin_workflow import plugin_start, project_import_watch
from storage.errors import KanbanError
from tests.bridge_js.test_node_suite import BRIDGE, missing, node_or_skip
from tests.kanban.projects.test_plugin_workflow import edits

pytestmark = pytest.mark.django_db


@pytest.fixture
def esbuild() -> None:
    if not REPOSITORY_ESBUILD.is_file():
        missing("esbuild is not installed: run `npm ci` in bridge_js")


def served(project_id: str, path: str) -> str:
    return bytes(PluginFile.objects.get(project_id=project_id, path=path).content).decode()


def project_id_of(folder: Path) -> str:
    package = json.loads((folder / "package.json").read_text())
    return str(package["steamHarness"]["projectInfo"]["projectId"])


def test_a_typescript_plugin_type_checks_strictly_builds_and_passes_its_own_test(
    tmp_path: Path, esbuild: None
) -> None:
    folder = tmp_path / "counter"
    call_command("startplugin", "Team counter", str(folder), "--typescript")
    assert (folder / "app.ts").is_file() and (folder / "app.js").is_file()
    assert "steamHarnessKanban" in served(project_id_of(folder), "app.js")
    assert ": string" not in (folder / "app.js").read_text(), "types are stripped"

    tsc = BRIDGE / "node_modules" / ".bin" / "tsc"
    checked = subprocess.run([str(tsc), "-p", "."], cwd=folder, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = subprocess.run([node_or_skip(), "--test"], cwd=folder, capture_output=True, text=True)
    assert tested.returncode == 0 and "# pass 2" in tested.stdout, tested.stdout + tested.stderr

    package = json.loads((folder / "package.json").read_text())
    assert package["steamHarness"]["kanban"]["build"] == {"entry": "app.ts", "outfile": "app.js"}
    assert set(package["devDependencies"]) == {"esbuild", "typescript"}


def test_a_syntax_error_is_reported_at_its_line_and_column_and_imports_nothing(
    tmp_path: Path, esbuild: None
) -> None:
    folder = plugin_start(name="Counter", path=tmp_path / "counter", typescript=True)
    call_command("import_project", str(folder))
    before = served(project_id_of(folder), "app.js")
    source = folder / "app.ts"
    source.write_text(source.read_text() + "\nconst broken: number = ;\n")
    with pytest.raises(KanbanError) as refused:
        plugin_build(folder=folder)
    lines = source.read_text().count("\n")
    assert refused.value.details["problems"][0]["path"] == f"app.ts:{lines}:24"  # the ";"
    with pytest.raises(CommandError, match="nothing imported"):
        call_command("import_project", str(folder))
    assert served(project_id_of(folder), "app.js") == before
    assert (folder / "app.js").read_text() == before, "the last good build stays"


def test_watch_rebuilds_after_an_edit_and_not_after_its_own_output(
    tmp_path: Path, esbuild: None
) -> None:
    folder = plugin_start(name="Counter", path=tmp_path / "counter", typescript=True)
    source = folder / "app.ts"

    def edit() -> None:
        source.write_text(source.read_text().replace('"counter"', '"clicks"'))

    attempts = list(project_import_watch(path=folder, polls=4, wait=edits(edit)))
    assert [a.error for a in attempts] == [None, None], "the first import and one rebuild"
    assert '"clicks"' in served(project_id_of(folder), "app.js")


def test_node_modules_and_a_bundle_reaching_outside_stay_out_of_the_package(
    tmp_path: Path, esbuild: None
) -> None:
    folder = plugin_start(name="Counter", path=tmp_path / "counter", typescript=True)
    (tmp_path / "secret.ts").write_text('export const secret = "outside";\n')
    (folder / "node_modules" / "tool").mkdir(parents=True)
    (folder / "node_modules" / "tool" / "index.js").write_text("module.exports = 1;\n")
    source = folder / "app.ts"
    source.write_text('import { secret } from "../secret";\nconsole.log(secret);\n')
    call_command("import_project", str(folder))
    project = Project.objects.get(id=project_id_of(folder))
    paths = set(PluginFile.objects.filter(project=project).values_list("path", flat=True))
    assert not any(path.startswith("node_modules") for path in paths)
    assert "outside" not in served(str(project.id), "app.js"), "one file is built, not bundled"
