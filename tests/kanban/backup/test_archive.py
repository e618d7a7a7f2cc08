"""A deployment backed up and restored into an empty database: the demo people sign in with
their passwords and read their board as it was; an archive is loaded whole or not at all."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from kanban.backup.archive import backup_restore, backup_verify, backup_write
from kanban.backup.models import backed_up_models
from kanban.data.demo import DemoLogin, demo_load
from kanban.models import Membership, Project
from storage import dump
from storage.engine import driver_cursor
from storage.errors import ErrorCode, KanbanError

pytestmark = pytest.mark.django_db(transaction=True)

COMMENT = {"id": "a1", "author": "alice", "text": "Moved back in.", "at": "2026-12-04"}


def signed_in(login: DemoLogin) -> Client:
    client = Client()
    assert client.login(username=login.username, password=login.password)
    return client


def kv_url(board: Project, key: str, *, history: bool = False) -> str:
    kind = "history/kv" if history else "kv"
    return f"/api/v1/projects/{board.id}/{kind}/{quote(key, safe='')}"


def put(client: Client, board: Project, key: str, value: Any) -> None:
    response = client.put(
        kv_url(board, key), data=json.dumps({"value": value}), content_type="application/json"
    )
    assert response.status_code == 200, response.content


def board_as_seen(client: Client, board: Project) -> dict[str, Any]:
    """The board's cards, card c1's history and its comments, as the API gives them."""
    cards = client.get(kv_url(board, "board:cards")).json()["value"]
    return {
        "cards": {card: client.get(kv_url(board, f"card:{card}")).json() for card in cards},
        "history": client.get(kv_url(board, "card:c1", history=True)).json(),
        "comments": client.get(kv_url(board, "comments:c1")).json(),
    }


def demo_with_a_comment_and_an_edit() -> tuple[dict[str, DemoLogin], Project]:
    logins = {login.username: login for login in demo_load()}
    board = Project.objects.get(name="Board")
    alice = signed_in(logins["alice"])
    put(alice, board, "comments:c1", [COMMENT])
    card = alice.get(kv_url(board, "card:c1")).json()["value"]
    put(alice, board, "card:c1", {**card, "title": "Write the move-in plan"})
    return logins, board


def empty_the_database() -> None:
    for model in reversed(backed_up_models()):
        model._default_manager.all().delete()
    with driver_cursor("default") as (dialect, cursor):
        dialect.clear(cursor)


def test_the_demo_restored_into_an_empty_database_is_the_board_alice_left(
    tmp_path: Path,
) -> None:
    logins, board = demo_with_a_comment_and_an_edit()
    editors = Group.objects.create(name="editors")
    editors.permissions.add(Permission.objects.get(codename="change_project"))
    User.objects.get(username="bob").groups.add(editors)
    before = board_as_seen(signed_in(logins["alice"]), board)
    archive = tmp_path / "team.zip"
    backup_write(path=archive)
    empty_the_database()

    manifest = backup_restore(path=archive)

    assert manifest["source"]["vendor"] in ("sqlite", "postgresql")
    # Before anyone signs in again, which changes their last_login.
    assert all(check.agrees for check in backup_verify(path=archive))
    assert board_as_seen(signed_in(logins["alice"]), board) == before
    assert before["history"]["entries"][0]["value"]["title"] == "Write the move-in plan"
    assert before["comments"]["value"] == [COMMENT]
    assert signed_in(logins["carol"]).get(kv_url(board, "card:c1")).status_code == 200
    assert User.objects.get(username="bob").has_perm("kanban.change_project")


def test_new_rows_and_writes_continue_past_the_restored_ones(tmp_path: Path) -> None:
    logins, board = demo_with_a_comment_and_an_edit()
    highest_membership = Membership.objects.order_by("-id").values_list("id", flat=True)[0]
    archive = tmp_path / "team.zip"
    backup_write(path=archive)
    with driver_cursor("default") as (dialect, cursor):
        last_seq = dialect.last_seq(cursor)
    empty_the_database()
    backup_restore(path=archive)

    dave = User.objects.create_user("dave")
    joined = Membership.objects.create(user=dave, project=board, role="guest")
    assert joined.id > highest_membership
    put(signed_in(logins["alice"]), board, "card:c9", {"id": "c9", "title": "New"})
    with driver_cursor("default") as (dialect, cursor):
        assert dialect.last_seq(cursor) > last_seq


def test_a_restore_into_a_database_holding_anything_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    demo_with_a_comment_and_an_edit()
    archive = tmp_path / "team.zip"
    backup_write(path=archive)
    empty_the_database()
    User.objects.create_user("erin")

    with pytest.raises(KanbanError) as refused:
        backup_restore(path=archive)

    assert refused.value.code == ErrorCode.CONFLICT
    assert "auth.user" in refused.value.message
    assert list(User.objects.values_list("username", flat=True)) == ["erin"]
    assert not Project.objects.exists() and dump.is_empty()


def test_a_store_holding_values_is_not_empty_either(tmp_path: Path) -> None:
    demo_with_a_comment_and_an_edit()
    archive = tmp_path / "team.zip"
    backup_write(path=archive)
    for model in reversed(backed_up_models()):
        model._default_manager.all().delete()

    with pytest.raises(KanbanError) as refused:
        backup_restore(path=archive)

    assert refused.value.code == ErrorCode.CONFLICT and "storage" in refused.value.message
    assert not User.objects.exists()


def rewrite(archive: Path, name: str, change: Any) -> None:
    """Rewrite one member of the zip (its own CRC made anew, as a deliberate edit would)."""
    members = {}
    with zipfile.ZipFile(archive) as zf:
        for member in zf.namelist():
            members[member] = zf.read(member)
    members[name] = change(members[name])
    with zipfile.ZipFile(archive, "w") as zf:
        for member, data in members.items():
            zf.writestr(member, data)


def test_an_archive_whose_part_differs_from_its_checksum_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    demo_with_a_comment_and_an_edit()
    archive = tmp_path / "team.zip"
    backup_write(path=archive)
    empty_the_database()
    rewrite(archive, "models/auth.user.jsonl", lambda data: data.replace(b"alice", b"mallory"))

    with pytest.raises(KanbanError) as refused:
        backup_restore(path=archive)

    assert refused.value.code == ErrorCode.INVALID_ARGUMENT
    assert "models/auth.user.jsonl does not match its checksum" in refused.value.message
    assert not User.objects.exists() and not Project.objects.exists() and dump.is_empty()


def test_an_archive_of_a_later_format_version_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "empty.zip"
    backup_write(path=archive)

    def later(data: bytes) -> bytes:
        return json.dumps({**json.loads(data), "version": 3}).encode()

    rewrite(archive, "manifest.json", later)

    with pytest.raises(KanbanError, match="kanban backup version 3; this server restores"):
        backup_restore(path=archive)


def test_verify_names_the_parts_that_differ_from_the_database(tmp_path: Path) -> None:
    logins, board = demo_with_a_comment_and_an_edit()
    archive = tmp_path / "team.zip"
    backup_write(path=archive)
    put(signed_in(logins["bob"]), board, "card:c2", {"id": "c2", "title": "Changed since"})
    User.objects.filter(username="carol").update(first_name="Caroline")

    differing = {check.name for check in backup_verify(path=archive) if not check.agrees}

    assert differing == {"models/auth.user.jsonl", "storage.jsonl"}


def test_the_commands_back_up_restore_and_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo_with_a_comment_and_an_edit()
    archive = tmp_path / "team.zip"
    call_command("backup", str(archive))
    assert "3 auth.user" in capsys.readouterr().out
    with pytest.raises(CommandError, match="conflict: a restore needs an empty"):
        call_command("restore", str(archive))
    empty_the_database()

    call_command("restore", str(archive), "--verify")

    out = capsys.readouterr().out
    assert "Restored" in out and "Verified: all" in out
    assert not (tmp_path / "team.zip.partial").exists()
