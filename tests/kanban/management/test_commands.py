"""The command-line tools, run the way manage.py runs them."""

from __future__ import annotations

import importlib
import io
import json
import os
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.models import AbstractUser
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from kanban.access.memberships import role_of
from kanban.access.relationships import relationship_declare
from kanban.data.notifications import notification_send
from kanban.models import Notification, Project
from storage.kv import Dataset, kv_set
from tests.bridge_js.test_node_suite import missing
from tests.factories import a_project, a_user, users
from tests.kanban.conftest import MakeProject

pytestmark = pytest.mark.django_db

User = get_user_model()
PASSWORD = "correct horse battery staple"


def manage(*argv: str) -> int:
    """Run a command as manage.py would and return its exit status. (Not through
    ``ManagementUtility``: that closes every database connection, the test's included.)"""
    try:
        call_command(*argv)
    except CommandError as error:
        # What BaseCommand.run_from_argv prints before exiting with the error's status.
        sys.stderr.write(f"CommandError: {error}\n")
        return error.returncode
    return 0


def write_package(folder: Path, info: dict[str, object]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    document = {"steamHarness": {"projectInfo": info}}
    (folder / "package.json").write_text(json.dumps(document, indent=2) + "\n")
    (folder / "index.html").write_text("<!doctype html><title>board</title>")
    return folder


def test_import_and_export_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project_id = str(uuid.uuid4())
    folder = write_package(
        tmp_path / "board",
        {"projectId": project_id, "name": "Board", "type": "kanban", "relatedProjects": []},
    )

    assert manage("import_project", str(folder)) == 0
    assert f"Imported Board ({project_id}): kanban, 0 relationship(s), 1 plugin file(s)" in (
        capsys.readouterr().out
    )

    assert manage("export_project", project_id, str(tmp_path / "out")) == 0
    assert (tmp_path / "out" / "package.json").read_text() == (folder / "package.json").read_text()
    assert (tmp_path / "out" / "index.html").read_text() == (folder / "index.html").read_text()

    assert manage("export_project", project_id, str(tmp_path / "out")) == 1
    assert "is not empty" in capsys.readouterr().err
    assert manage("export_project", project_id, str(tmp_path / "out"), "--force") == 0


def test_re_importing_over_an_administrators_change_lists_it_and_needs_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project_id = str(uuid.uuid4())
    folder = write_package(
        tmp_path / "board",
        {"projectId": project_id, "name": "Board", "type": "kanban", "relatedProjects": []},
    )
    assert manage("import_project", str(folder)) == 0
    project = Project.objects.get(pk=project_id)
    relationship_declare(project=project, alias="ledger", project_id=uuid.uuid4())
    capsys.readouterr()

    assert manage("import_project", str(folder)) == 1
    err = capsys.readouterr().err
    assert "relatedProjects[alias=ledger]: relationship 'ledger'" in err
    assert "--replace-database-changes discards them" in err
    assert "nothing imported" in err

    assert manage("import_project", str(folder), "--replace-database-changes") == 0
    assert not project.relationships.exists()


def test_an_invalid_package_prints_each_error_with_its_json_path_and_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_package(
        tmp_path / "board",
        {
            "projectId": str(uuid.uuid4()),
            "name": "Board",
            "type": "kanban",
            "relatedProjects": [
                {"alias": "ok", "projectId": str(uuid.uuid4())},
                {"alias": "also-ok", "projectId": str(uuid.uuid4())},
                {"alias": "Not OK", "projectId": "123"},
            ],
        },
    )

    assert manage("import_project", str(folder)) == 1

    err = capsys.readouterr().err
    assert "steamHarness.projectInfo.relatedProjects[2].alias: alias 'Not OK' must match" in err
    assert (
        "steamHarness.projectInfo.relatedProjects[2].projectId: projectId '123' is not a UUID"
        in (err)
    )
    assert "nothing imported" in err
    assert not Project.objects.exists()


def test_adduser_reads_the_password_from_stdin() -> None:
    call_command("adduser", "dora", "--password-stdin", stdin=io.StringIO(PASSWORD + "\n"))

    dora = User.objects.get(username="dora")
    assert authenticate(username="dora", password=PASSWORD) == dora
    assert (dora.is_active, dora.is_staff, dora.is_superuser) == (True, False, False)


def test_adduser_makes_staff_and_superusers_or_users_without_a_password() -> None:
    call_command("adduser", "ops", "--staff", "--password-stdin", stdin=io.StringIO(PASSWORD))
    call_command("adduser", "root", "--superuser", "--password-stdin", stdin=io.StringIO(PASSWORD))
    call_command("adduser", "robot")

    flags = {u.username: (u.is_staff, u.is_superuser) for u in User.objects.all()}
    assert flags == {"ops": (True, False), "root": (True, True), "robot": (False, False)}
    assert not User.objects.get(username="robot").has_usable_password()


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        (["adduser", "alice", "--password-stdin"], PASSWORD, "user 'alice' already exists"),
        (["adduser", "dora", "--password-stdin"], "123", "This password is too short"),
        (["adduser", "dora", "--password-stdin"], "", "no password on standard input"),
    ],
    ids=["exists", "weak", "empty"],
)
def test_adduser_refuses_duplicates_and_weak_passwords(
    alice: AbstractUser, argv: list[str], stdin: str, message: str
) -> None:
    with pytest.raises(CommandError, match=message):
        call_command(*argv, stdin=io.StringIO(stdin))
    assert User.objects.count() == 1


def test_membership_sets_changes_and_removes_a_role(
    make_project: MakeProject, alice: AbstractUser, capsys: pytest.CaptureFixture[str]
) -> None:
    board = make_project("Board")

    call_command("membership", "alice", str(board.id), "guest")
    assert role_of(user=alice, project=board) == "guest"
    call_command("membership", "alice", str(board.id), "owner")
    assert role_of(user=alice, project=board) == "owner"
    call_command("membership", "alice", str(board.id), "owner")
    assert capsys.readouterr().out.splitlines()[-1].endswith("(unchanged)")
    call_command("membership", "alice", str(board.id), "none")
    assert role_of(user=alice, project=board) is None


def test_membership_refuses_unknown_users_projects_and_roles(
    make_project: MakeProject, alice: AbstractUser
) -> None:
    board = make_project("Board")

    with pytest.raises(CommandError, match="no user 'zed'"):
        call_command("membership", "zed", str(board.id), "guest")
    with pytest.raises(CommandError, match="no project"):
        call_command("membership", "alice", str(uuid.uuid4()), "guest")
    assert manage("membership", "alice", str(board.id), "admin") != 0
    assert role_of(user=alice, project=board) is None


def test_manage_py_exits_non_zero_on_an_invalid_package(tmp_path: Path) -> None:
    folder = write_package(
        tmp_path / "board",
        {"projectId": "not-a-uuid", "name": "", "type": "kanban", "relatedProjects": []},
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env["KANBAN_SQLITE_PATH"] = str(tmp_path / "unused.sqlite3")

    result = subprocess.run(
        [sys.executable, "manage.py", "import_project", str(folder)],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 1
    assert result.stderr.splitlines()[:2] == [
        "steamHarness.projectInfo.projectId: projectId 'not-a-uuid' is not a UUID",
        "steamHarness.projectInfo.name: name must be a non-empty string",
    ]


def test_import_project_takes_a_relative_path_to_a_typescript_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`import_project ts-counter` from the folder above it, with the esbuild link that an
    `npm install` in the package makes (which the build no longer runs)."""
    from kanban.projects.plugin_workflow import plugin_start
    from tests.kanban.projects.test_plugin_build import REAL_ESBUILD

    if not REAL_ESBUILD.is_file():
        missing("esbuild is not installed: run `npm ci` in bridge_js")
    folder = plugin_start(name="TS counter", path=tmp_path / "ts-counter", typescript=True)
    (folder / "node_modules" / ".bin").mkdir(parents=True)
    (folder / "node_modules" / ".bin" / "esbuild").symlink_to(REAL_ESBUILD)
    monkeypatch.chdir(tmp_path)

    assert manage("import_project", "ts-counter") == 0

    assert "Imported TS counter" in capsys.readouterr().out
    assert Project.objects.filter(name="TS counter").exists()


def test_the_readme_plugin_steps_end_with_the_runner_as_owner_and_a_matching_context(
    tmp_path: Path,
) -> None:
    """startplugin then import_project, as the README gives them, on a database whose one
    superuser is alice: the new board has her as its owner, and the plugin's context says
    the role the members list shows."""
    from kanban.access.context import plugin_context
    from kanban.access.memberships import members_of
    from kanban.models import Project

    alice, bob = a_user("alice", superuser=True), a_user("bob")
    folder = tmp_path / "my-counter"
    assert manage("startplugin", "My counter", str(folder)) == 0
    assert manage("import_project", str(folder)) == 0
    project = Project.objects.get(name="My counter")
    members = {member.username: member.role for member in members_of(project=project)}
    assert members == {"alice": "owner"}
    context = plugin_context(user=alice, project_id=project.id)
    assert (context["role"], context["staff"]) == ("owner", True)

    assert manage("startplugin", "Bob's", str(tmp_path / "bobs"), "--owner", "bob") == 0
    bobs = Project.objects.get(name="Bob's")
    assert {m.username: m.role for m in members_of(project=bobs)} == {"bob": "owner"}
    assert plugin_context(user=bob, project_id=bobs.id)["role"] == "owner"
    assert manage("startplugin", "Nobody's", str(tmp_path / "x"), "--owner", "mallory") == 1


def test_declare_back_confirms_a_relationship_between_two_projects_of_one_owner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 000: "A new relationship writes explicit read: all and write: none on both
    sides by default". With --declare-back the import writes the other side where the same
    person owns it; where someone else does, it stays pending."""
    from kanban.access.relationships import declarations_of, relationship_statuses

    alice, bob = users("alice", "bob")
    stock, ledger = (uuid.uuid4() for _ in range(2))
    for project_id, name, owner in ((stock, "Stock room", alice), (ledger, "Ledger", bob)):
        write_package(
            tmp_path / name,
            {"projectId": str(project_id), "name": name, "type": "kanban", "relatedProjects": []},
        )
        assert manage("import_project", str(tmp_path / name), "--owner", owner.username) == 0
    board = write_package(
        tmp_path / "board",
        {
            "projectId": str(uuid.uuid4()),
            "name": "Board",
            "type": "kanban",
            "relatedProjects": [
                {"alias": "stock", "projectId": str(stock)},
                {"alias": "ledger", "projectId": str(ledger)},
            ],
        },
    )
    assert manage("import_project", str(board), "--owner", "alice", "--declare-back") == 0
    assert "Declared Board back in Stock room as 'board'" in capsys.readouterr().out
    project = Project.objects.get(name="Board")
    (back,) = declarations_of(Project.objects.get(pk=stock))
    assert (back.alias, back.project_id, back.grant.read.mode, back.grant.write.mode) == (
        "board",
        project.id,
        "all",
        "none",
    )
    assert declarations_of(Project.objects.get(pk=ledger)) == [], "bob's project: pending"
    statuses = relationship_statuses(project_id=project.id, related_project_ids=[stock, ledger])
    assert {key: str(value) for key, value in statuses.items()} == {
        stock: "confirmed",
        ledger: "pending",
    }


def test_prune_deletes_what_is_past_its_days_and_says_how_much() -> None:
    """The rules are the services' (tests/storage/test_kv.py, test_notifications.py); here,
    that the command runs both and says what it did."""
    alice, bob = users("alice", "bob")
    board = a_project(name="Board", owner=alice, members={bob: "developer"})
    kv_set(dataset=Dataset(board.id), key="card:1", value=1, source={"via": "test"})
    notification_send(actor=alice, project_id=board.id, users=["bob"], text="hi", via="cli")
    notification_send(actor=alice, project_id=board.id, users=["bob"], text="new", via="cli")
    Notification.objects.filter(text="hi").update(created_at=timezone.now() - timedelta(days=91))
    out = io.StringIO()

    call_command("prune", stdout=out)

    assert out.getvalue() == (
        "Deleted 0 kept versions older than 90 days and 1 notifications older than 90 days.\n"
    )
    assert list(Notification.objects.values_list("text", flat=True)) == ["new"]


@pytest.mark.parametrize(
    "name",
    sorted(
        path.stem
        for path in (Path(settings.BASE_DIR) / "kanban" / "management" / "commands").glob("*.py")
        if not path.stem.startswith("_")
    ),
)
def test_a_commands_help_is_its_module_docstring(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    module = importlib.import_module(f"kanban.management.commands.{name}")
    assert module.__doc__, f"{name} says nothing of itself"
    with pytest.raises(SystemExit):
        call_command(name, "--help")
    printed = " ".join(capsys.readouterr().out.split())
    assert " ".join(module.__doc__.split()) in printed
