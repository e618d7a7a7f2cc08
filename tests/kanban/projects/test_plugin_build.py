"""A TypeScript plugin: ``startplugin --typescript`` writes ``app.ts``, and every import
command builds ``app.js`` from it with esbuild first. The new folder type-checks strictly
and passes its own test as it is; a syntax error is reported where it is and imports
nothing; ``--watch`` rebuilds after an edit of the source and never takes its own output
for an edit.

The build runs nothing the package ships and touches nothing outside it: esbuild is the
repository's (or the operator's ``KANBAN_ESBUILD``), the entry is read and the outfile
written without following a link on any part of their paths, and odd output is refused
with a clear error that ``--watch`` reports and survives."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from kanban.environment import env_executable
from kanban.models import PluginFile, Project
from kanban.projects.plugin_build import plugin_build
from kanban.projects.plugin_files import MAX_PLUGIN_FILE_BYTES
from kanban.projects.plugin_workflow import plugin_start, project_import_watch
from storage.errors import KanbanError
from tests.bridge_js.test_node_suite import BRIDGE, missing, node_or_skip
from tests.kanban.projects.test_plugin_workflow import edits

pytestmark = pytest.mark.django_db

#: The pinned esbuild that `npm ci` in bridge_js installs: the one every build runs.
REAL_ESBUILD = BRIDGE / "node_modules" / "esbuild" / "bin" / "esbuild"


@pytest.fixture
def esbuild() -> None:
    if not REAL_ESBUILD.is_file():
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


# --- what the build runs, reads and writes -----------------------------------------------------


def set_build(folder: Path, *, entry: str, outfile: str) -> None:
    package = json.loads((folder / "package.json").read_text())
    package["steamHarness"]["kanban"]["build"] = {"entry": entry, "outfile": outfile}
    (folder / "package.json").write_text(json.dumps(package, indent=2) + "\n")


def an_executable(path: Path, script: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return path


def test_an_esbuild_the_package_ships_never_runs(tmp_path: Path, esbuild: None) -> None:
    """The attacker's package carries node_modules/.bin/esbuild (a clone keeps its run bit)
    that leaves a mark and then does the real build, so that nothing looks amiss."""
    folder = plugin_start(name="Counter", path=tmp_path / "counter", typescript=True)
    marker = tmp_path / "ran"
    an_executable(
        folder / "node_modules" / ".bin" / "esbuild",
        f'id > "{marker}"\nexec "{REAL_ESBUILD}" "$@"\n',
    )
    source = folder / "app.ts"
    source.write_text(source.read_text().replace('"counter"', '"clicks"'))

    call_command("import_project", str(folder))
    attempts = list(project_import_watch(path=folder, polls=1, wait=edits()))

    assert not marker.exists(), "the package's own esbuild ran"
    assert [attempt.error for attempt in attempts] == [None]
    assert '"clicks"' in served(project_id_of(folder), "app.js"), "built by the repository's"


def test_an_outfile_through_a_linked_folder_writes_nothing_there_and_imports_nothing(
    tmp_path: Path, esbuild: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """`out` links to a site-packages folder, and the outfile is a .pth file there, which
    the next Python process would run."""
    folder = plugin_start(name="Counter", path=tmp_path / "counter", typescript=True)
    site_packages = tmp_path / "site-packages"
    site_packages.mkdir()
    (folder / "out").symlink_to(site_packages)
    set_build(folder, entry="app.ts", outfile="out/zz.pth")

    with pytest.raises(CommandError, match="nothing imported"):
        call_command("import_project", str(folder))

    assert list(site_packages.iterdir()) == []
    assert "steamHarness.kanban.build.outfile: out is a link" in capsys.readouterr().err
    assert not Project.objects.filter(id=project_id_of(folder)).exists()


def test_an_entry_through_a_linked_folder_is_refused_and_nothing_of_it_is_read(
    tmp_path: Path, esbuild: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """`src` links to a folder outside holding credentials; esbuild's JSON loader would make
    them a module, served as app.js to anyone. A JSON entry is no script, and a script
    there is not read either."""
    folder = plugin_start(name="Counter", path=tmp_path / "counter", typescript=True)
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "credentials.json").write_text('{"token": "s3cret"}\n')
    (outside / "credentials.ts").write_text('export const token = "s3cret";\n')
    (folder / "src").symlink_to(outside)

    for entry, refusal in [
        ("src/credentials.json", "src/credentials.json must be a .ts, .tsx or .js file"),
        ("src/credentials.ts", "src is a link"),
    ]:
        set_build(folder, entry=entry, outfile="app.js")
        with pytest.raises(CommandError, match="nothing imported"):
            call_command("import_project", str(folder))
        assert f"steamHarness.kanban.build.entry: {refusal}" in capsys.readouterr().err

    assert "s3cret" not in (folder / "app.js").read_text()
    assert not Project.objects.filter(id=project_id_of(folder)).exists()


@pytest.mark.parametrize("field", ["entry", "outfile"])
def test_a_link_on_a_middle_folder_of_the_entry_or_the_outfile_is_refused(
    tmp_path: Path, esbuild: None, field: str
) -> None:
    folder = plugin_start(name="Counter", path=tmp_path / "counter", typescript=True)
    outside = tmp_path / "outside"
    (outside / "b").mkdir(parents=True)
    (outside / "b" / "app.ts").write_text('export const where = "outside";\n')
    (folder / "a").symlink_to(outside)
    paths = {
        "entry": "app.ts",
        "outfile": "app.js",
        field: f"a/b/app.{'ts' if field == 'entry' else 'js'}",
    }
    set_build(folder, **paths)

    with pytest.raises(KanbanError) as refused:
        plugin_build(folder=folder)

    assert refused.value.message == f"steamHarness.kanban.build.{field}: a is a link"
    assert sorted(path.name for path in (outside / "b").iterdir()) == ["app.ts"]
    assert "outside" not in (folder / "app.js").read_text()


def test_only_typescript_and_javascript_are_built(tmp_path: Path, esbuild: None) -> None:
    folder = plugin_start(name="Counter", path=tmp_path / "counter", typescript=True)
    (folder / "data.json").write_text('{"token": "s3cret"}\n')
    set_build(folder, entry="data.json", outfile="app.js")

    with pytest.raises(KanbanError, match=r"data\.json must be a \.ts, \.tsx or \.js file"):
        plugin_build(folder=folder)
    assert "s3cret" not in (folder / "app.js").read_text()


def test_an_outfile_the_build_would_leave_as_it_is_is_not_written_again(
    tmp_path: Path, esbuild: None
) -> None:
    folder = plugin_start(name="Counter", path=tmp_path / "counter", typescript=True)
    outfile = folder / "app.js"
    before = outfile.stat()
    plugin_build(folder=folder)
    assert (
        outfile.stat().st_ino == before.st_ino and outfile.stat().st_mtime_ns == before.st_mtime_ns
    )
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == [], "no temp"


def test_watch_survives_an_outfile_that_is_not_utf8_and_builds_over_it(
    tmp_path: Path, esbuild: None
) -> None:
    folder = plugin_start(name="Counter", path=tmp_path / "counter", typescript=True)
    (folder / "app.js").write_bytes(b"\xff\xfe")

    attempts = list(project_import_watch(path=folder, polls=1, wait=edits()))

    assert [attempt.error for attempt in attempts] == [None]
    assert "steamHarnessKanban" in (folder / "app.js").read_text()


def test_an_entry_that_is_not_utf8_is_a_clear_error(tmp_path: Path, esbuild: None) -> None:
    folder = plugin_start(name="Counter", path=tmp_path / "counter", typescript=True)
    (folder / "app.ts").write_bytes(b'const name = "\xff";\n')

    with pytest.raises(KanbanError, match=r"app\.ts is not UTF-8 text") as refused:
        plugin_build(folder=folder)
    assert refused.value.code == "invalid_argument"


@pytest.mark.parametrize(
    ("output", "said"),
    [
        ("printf '\\377\\376'", "is not UTF-8 text"),
        (f"head -c {MAX_PLUGIN_FILE_BYTES + 1} /dev/zero", f"larger than {MAX_PLUGIN_FILE_BYTES}"),
    ],
    ids=["not-utf8", "too-large"],
)
def test_odd_output_of_esbuild_is_reported_and_watch_keeps_watching(
    tmp_path: Path, esbuild: None, output: str, said: str
) -> None:
    """The operator's esbuild (KANBAN_ESBUILD) writes something no script is; the next
    save, built by a sane one, imports."""
    folder = plugin_start(name="Counter", path=tmp_path / "counter", typescript=True)
    tool = an_executable(tmp_path / "tools" / "esbuild", f"cat > /dev/null\n{output}\n")
    source = folder / "app.ts"

    def fix_the_tool_and_save() -> None:
        an_executable(tool, f'exec "{REAL_ESBUILD}" "$@"\n')
        source.write_text(source.read_text().replace('"counter"', '"clicks"'))

    with override_settings(KANBAN_ESBUILD=tool):
        attempts = list(
            project_import_watch(path=folder, polls=2, wait=edits(fix_the_tool_and_save))
        )

    assert attempts[0].error is not None and attempts[0].error.code == "invalid_argument"
    assert said in attempts[0].error.message
    assert [attempt.error for attempt in attempts[1:]] == [None]
    assert '"clicks"' in served(project_id_of(folder), "app.js")


def test_the_operators_esbuild_is_an_absolute_path_to_a_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default = tmp_path / "default"
    monkeypatch.delenv("KANBAN_ESBUILD", raising=False)
    assert env_executable("KANBAN_ESBUILD", default) == default
    tool = an_executable(tmp_path / "bin" / "esbuild", "exit 0\n")
    (tmp_path / "link").symlink_to(tool)
    monkeypatch.setenv("KANBAN_ESBUILD", str(tmp_path / "link"))
    assert env_executable("KANBAN_ESBUILD", default) == tool, "resolved once, at start"
    for wrong in ("esbuild", str(tmp_path / "missing"), str(tmp_path / "bin")):
        monkeypatch.setenv("KANBAN_ESBUILD", wrong)
        with pytest.raises(ImproperlyConfigured, match="KANBAN_ESBUILD"):
            env_executable("KANBAN_ESBUILD", default)


def test_a_file_name_that_is_not_utf8_is_reported_and_watch_keeps_watching(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = plugin_start(name="Counter", path=tmp_path / "counter")
    odd = os.path.join(os.fsencode(folder), b"\xff.js")
    with open(odd, "wb") as file:
        file.write(b"console.log(1);\n")

    with pytest.raises(CommandError, match="nothing imported"):
        call_command("import_project", str(folder))
    assert "is not UTF-8" in capsys.readouterr().err

    attempts = list(project_import_watch(path=folder, polls=2, wait=edits(lambda: os.remove(odd))))
    assert attempts[0].error is not None and "is not UTF-8" in attempts[0].error.message
    assert [attempt.error for attempt in attempts[1:]] == [None]
