"""A plugin developer's loop: ``startplugin`` writes a package that imports as is, and
``import_project --watch`` imports it again after each change (reporting, and changing
nothing for, a broken package), announcing each change of the plugin to open boards."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from kanban.models import PluginFile, Project
from kanban.projects.packages import project_import, read_package
from kanban.projects.plugin_events import PLUGIN_CHANGED
from kanban.projects.plugin_files import plugin_versions
from kanban.projects.plugin_workflow import plugin_start, project_import_watch
from storage.errors import ErrorCode, KanbanError
from tests.bridge_js.test_node_suite import BRIDGE, missing

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def plugin_changes() -> Iterator[list[tuple[UUID, str]]]:
    seen: list[tuple[UUID, str]] = []
    remove = PLUGIN_CHANGED.listen(lambda event: seen.append((event.project_id, event.version)))
    yield seen
    remove()


def edits(*steps: Callable[[], object]) -> Callable[[float], None]:
    """A ``wait`` for the watcher: while it waits before each look, the developer does the
    next step (then nothing)."""
    pending = list(steps)

    def wait(seconds: float) -> None:
        if pending:
            pending.pop(0)()

    return wait


# --- startplugin ---------------------------------------------------------------------------


def test_startplugin_writes_a_package_that_imports_as_is(tmp_path: Path) -> None:
    folder = plugin_start(name="Team counter", path=tmp_path / "counter")
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md",
        "app.js",
        "app.test.mjs",
        "index.html",
        "kanban-testing.mjs",
        "kanban.d.ts",
        "package.json",
        "style.css",
        "tsconfig.json",
    ]
    document = json.loads((folder / "package.json").read_text())
    info = document["steamHarness"]["projectInfo"]
    assert document["name"] == "team-counter"
    assert UUID(info["projectId"]).version == 4
    assert (info["name"], info["type"], info["relatedProjects"]) == ("Team counter", "kanban", [])
    assert document["steamHarness"]["kanban"] == {"entry": "index.html"}

    html = (folder / "index.html").read_text()
    assert '<script src="/static/bridge/kanban.js"></script>' in html
    assert '<script crossorigin src="app.js"></script>' in html
    assert "<script>" not in html, "the plugin CSP forbids inline scripts"
    app = (folder / "app.js").read_text()
    for call in ("kv.updateValue", "kv.subscribe", "getConfiguration()"):
        assert call in app
    assert info["projectId"] in (folder / "README.md").read_text()

    project = project_import(path=folder)
    assert (project.id, project.name) == (UUID(info["projectId"]), "Team counter")
    served = set(project.plugin_files.values_list("path", flat=True))
    assert served == {"app.js", "index.html", "style.css"}, "what the page loads, no more"


def test_every_plugin_gets_its_own_project_id(tmp_path: Path) -> None:
    first = read_package(plugin_start(name="One", path=tmp_path / "one"))
    second = read_package(plugin_start(name="One", path=tmp_path / "two"))
    assert first.project_id != second.project_id


def test_startplugin_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(KanbanError) as refused:
        plugin_start(name="Counter", path=tmp_path)
    assert refused.value.code == ErrorCode.CONFLICT
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert plugin_start(name="Counter", path=empty) == empty


def test_startplugin_defaults_to_a_folder_named_after_the_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    call_command("startplugin", "counter")
    project_id = read_package(tmp_path / "counter").project_id
    printed = capsys.readouterr()
    assert "import_project counter --watch" in printed.out
    # Nobody to default to (no superuser, no terminal): it says how to give it an owner.
    assert f"membership USERNAME {project_id} owner" in printed.err
    with pytest.raises(CommandError, match="is not empty"):
        call_command("startplugin", "counter")
    with pytest.raises(CommandError, match="cannot be a folder name"):
        call_command("startplugin", "../elsewhere")


# --- import_project --watch ----------------------------------------------------------------


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return plugin_start(name="Counter", path=tmp_path / "counter")


def project_of(package: Path) -> Project:
    return Project.objects.get(pk=read_package(package).project_id)


def app_js(project: Project) -> bytes:
    return bytes(PluginFile.objects.get(project=project, path="app.js").content)


def test_watch_imports_at_once_then_after_each_change(
    package: Path, plugin_changes: list[tuple[UUID, str]]
) -> None:
    app = package / "app.js"
    attempts = project_import_watch(
        path=package,
        polls=4,
        wait=edits(
            lambda: app.write_text("// first edit\n"),
            lambda: None,  # nothing changed: no import
            lambda: (package / "extra.css").write_text("p {}\n"),
        ),
    )
    imported = [attempt.project for attempt in attempts]
    assert len(imported) == 3
    assert all(project is not None and project.name == "Counter" for project in imported)
    project = project_of(package)
    assert app_js(project) == b"// first edit\n"
    assert project.plugin_files.filter(path="extra.css").exists()
    # The first import created the project (no board could show it yet); the two changes
    # after it are announced, each with the version it produced.
    assert [project_id for project_id, _ in plugin_changes] == [project.id, project.id]
    assert plugin_changes[-1][1] == plugin_versions(project_ids=[project.id])[project.id]
    assert plugin_changes[0][1] != plugin_changes[1][1]


def test_a_broken_package_is_reported_changes_nothing_and_watching_goes_on(
    package: Path, plugin_changes: list[tuple[UUID, str]]
) -> None:
    manifest = package / "package.json"
    good = manifest.read_text()
    attempts = list(
        project_import_watch(
            path=package,
            polls=2,
            wait=edits(
                lambda: (
                    (package / "app.js").write_text("// half done\n"),
                    manifest.write_text(good.replace('"kanban"', '"spreadsheet"')),
                ),
                lambda: manifest.write_text(good),
            ),
        )
    )
    assert [attempt.error is None for attempt in attempts] == [True, False, True]
    broken = attempts[1].error
    assert broken is not None and broken.code == ErrorCode.INVALID_ARGUMENT
    assert broken.details["problems"][0]["path"] == "steamHarness.projectInfo.type"
    project = project_of(package)
    assert app_js(project) == b"// half done\n", "the fixed package was imported in full"
    assert len(plugin_changes) == 1, "the broken attempt announced nothing"


def test_a_file_that_vanishes_while_it_is_read_is_reported_and_watching_goes_on(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor's temporary file removed mid-import ended the watch with a
    FileNotFoundError traceback."""
    from kanban.projects import plugin_workflow

    swap = package / ".app.js.swp"

    def import_while_the_editor_saves(**arguments: object) -> Project:
        if swap.exists():
            swap.unlink()
            raise FileNotFoundError(2, "No such file or directory", str(swap))
        return project_import(**arguments)  # type: ignore[arg-type]

    monkeypatch.setattr(plugin_workflow, "project_import", import_while_the_editor_saves)
    attempts = list(
        project_import_watch(
            path=package,
            polls=2,
            wait=edits(
                lambda: (swap.write_text("x"), (package / "app.js").write_text("// saved\n")),
                lambda: (package / "app.js").write_text("// saved again\n"),
            ),
        )
    )
    assert [attempt.error is None for attempt in attempts] == [True, False, True]
    vanished = attempts[1].error
    assert vanished is not None and vanished.code == ErrorCode.INVALID_ARGUMENT
    assert "changed while it was read" in vanished.message
    assert app_js(project_of(package)) == b"// saved again\n"


def test_an_identical_reimport_announces_nothing(
    package: Path, plugin_changes: list[tuple[UUID, str]]
) -> None:
    project_import(path=package)
    project_import(path=package)
    assert plugin_changes == []
    (package / "style.css").write_text("body { color: red; }\n")
    project = project_import(path=package)
    assert plugin_changes == [(project.id, plugin_versions(project_ids=[project.id])[project.id])]


def test_the_watch_command_prints_each_import_and_each_problem(
    package: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import kanban.management.commands.import_project as command

    manifest = package / "package.json"
    original = command.project_import_watch

    def bounded(**options: object) -> object:
        return original(
            **options,  # type: ignore[arg-type]
            polls=1,
            wait=edits(lambda: manifest.write_text("{not json")),
        )

    monkeypatch.setattr(command, "project_import_watch", bounded)
    call_command("import_project", str(package), "--watch")
    captured = capsys.readouterr()
    assert f"Watching {package}" in captured.out
    assert "Imported Counter (" in captured.out
    assert "package.json:" in captured.err
    assert "nothing imported; still watching" in captured.err


def test_plugin_versions_leave_out_projects_that_do_not_exist(package: Path) -> None:
    project = project_import(path=package)
    missing = uuid.uuid4()
    assert set(plugin_versions(project_ids=[project.id, missing])) == {project.id}


# --- startplugin: all or nothing -------------------------------------------------------------


@pytest.fixture
def no_esbuild(tmp_path: Path, settings: Any) -> None:
    """A new developer's machine: no `npm ci` in bridge_js yet, so no esbuild."""
    settings.KANBAN_ESBUILD = (
        tmp_path / "bridge_js" / "node_modules" / "esbuild" / "bin" / "esbuild"
    )


@pytest.fixture
def failing_esbuild(tmp_path: Path, settings: Any) -> None:
    """An esbuild that is there but fails, as a broken install does: the build step fails
    after the skeleton is written."""
    tool = tmp_path / "broken-bin" / "esbuild"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho 'this esbuild is broken' >&2\nexit 1\n")
    tool.chmod(0o755)
    settings.KANBAN_ESBUILD = tool


def test_startplugin_typescript_without_esbuild_writes_nothing_and_a_rerun_works(
    tmp_path: Path, settings: Any, no_esbuild: None
) -> None:
    folder = tmp_path / "ts-counter"
    projects = Project.objects.count()

    with pytest.raises(CommandError, match="esbuild"):
        call_command("startplugin", "TS counter", str(folder), "--typescript")

    assert not folder.exists(), "no half-made folder"
    assert Project.objects.count() == projects, "no project"
    settings.KANBAN_ESBUILD = BRIDGE / "node_modules" / "esbuild" / "bin" / "esbuild"  # npm ci
    call_command("startplugin", "TS counter", str(folder), "--typescript")
    assert Project.objects.filter(pk=read_package(folder).project_id).exists()


def test_a_failed_build_removes_what_startplugin_wrote_and_creates_no_project(
    tmp_path: Path, failing_esbuild: None
) -> None:
    nested = tmp_path / "plugins" / "ts-counter"
    empty = tmp_path / "empty"
    empty.mkdir()
    projects = Project.objects.count()

    for folder in (nested, empty):
        with pytest.raises(CommandError, match="this esbuild is broken"):
            call_command("startplugin", "TS counter", str(folder), "--typescript")

    assert not (tmp_path / "plugins").exists(), "the folders it made are gone"
    assert empty.is_dir() and not any(empty.iterdir()), "a folder it was given stays, empty"
    assert Project.objects.count() == projects


def test_startplugin_checks_the_name_and_the_folder_before_asking_for_an_owner(
    tmp_path: Path,
) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    for name, folder, refusal in [
        ("", tmp_path / "blank", "name"),
        ("Counter", tmp_path / "taken", "is not empty"),
    ]:
        with pytest.raises(CommandError, match=refusal):
            call_command("startplugin", name, str(folder), "--owner", "nobody-yet")
        assert not (tmp_path / "blank").exists()
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["notes.txt"]


def test_a_typescript_plugin_serves_what_its_page_loads_and_none_of_the_developers_files(
    tmp_path: Path, client: Client
) -> None:
    """The README's order: startplugin --typescript, npm install (a lock file appears),
    import_project. The page loads index.html, style.css and the built app.js."""
    if not (BRIDGE / "node_modules" / "esbuild" / "bin" / "esbuild").is_file():
        missing("esbuild is not installed: run `npm ci` in bridge_js")
    folder = tmp_path / "ts-counter"
    call_command("startplugin", "TS counter", str(folder), "--typescript")
    (folder / "package-lock.json").write_text('{"lockfileVersion": 3}\n')
    call_command("import_project", str(folder))

    project = Project.objects.get(pk=read_package(folder).project_id)
    served = set(project.plugin_files.values_list("path", flat=True))
    assert served == {"app.js", "index.html", "style.css"}
    for developers in (
        "README.md",
        "app.test.mjs",
        "kanban-testing.mjs",
        "kanban.d.ts",
        "tsconfig.json",
        "package-lock.json",
        "app.ts",
    ):
        assert (folder / developers).is_file(), developers
        page = client.get(
            f"/plugins/{project.id}/{developers}", headers={"Sec-Fetch-Dest": "iframe"}
        )
        assert page.status_code == 404, developers
    page = client.get(f"/plugins/{project.id}/app.js", headers={"Sec-Fetch-Dest": "iframe"})
    assert page.status_code == 200
