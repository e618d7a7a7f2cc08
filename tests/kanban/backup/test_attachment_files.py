"""Attachments travel in the backup: bob's picture, backed up and restored on another machine
(a fresh database and a fresh attachments folder), is the picture carol downloads, and the
board's quota counts it as before; a changed file is refused before anything is written."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from PIL import Image

from kanban.backup.archive import backup_restore, backup_verify, backup_write
from kanban.data.attachments import attachment_list, attachment_upload
from kanban.data.demo import DemoLogin, demo_load
from kanban.models import Project
from storage import dump
from storage.errors import ErrorCode, KanbanError
from storage.kv import kv_project_bytes
from tests.kanban.backup.test_archive import empty_the_database, rewrite, signed_in

pytestmark = pytest.mark.django_db(transaction=True)


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (640, 480), (30, 90, 200)).save(out, format="PNG")
    return out.getvalue()


def folder(settings: Any, path: Path) -> Path:
    """The attachments storage in ``path`` from now on (another machine's, say)."""
    path.mkdir(parents=True, exist_ok=True)
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(path)},
        },
    }
    return path


def files_in(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file())


def bob_attaches_a_picture(settings: Any, tmp_path: Path) -> tuple[dict[str, DemoLogin], Project]:
    folder(settings, tmp_path / "here")
    logins = {login.username: login for login in demo_load()}
    board = Project.objects.get(name="Board")
    attachment_upload(
        user=User.objects.get(username="bob"),
        project_id=board.id,
        card="c1",
        name="floor-plan.png",
        content_type="image/png",
        stream=io.BytesIO(png()),
    )
    return logins, board


def carol_downloads(logins: dict[str, DemoLogin], board: Project) -> tuple[bytes, bytes]:
    """The picture and its cover, through the signed links made for carol."""
    (listed,) = attachment_list(
        user=User.objects.get(username="carol"), project_id=board.id, card="c1"
    )
    carol = signed_in(logins["carol"])
    got = []
    for url in (listed["url"], listed["thumbnailUrl"]):
        response = carol.get(url)
        assert response.status_code == 200, response
        got.append(b"".join(response.streaming_content))  # type: ignore[attr-defined]
    return got[0], got[1]


def test_a_restore_on_another_machine_serves_the_same_picture_and_counts_its_bytes(
    settings: Any, tmp_path: Path
) -> None:
    logins, board = bob_attaches_a_picture(settings, tmp_path)
    picture, cover = carol_downloads(logins, board)
    used = kv_project_bytes(project_id=board.id)
    assert used > len(picture) + len(cover)
    archive = tmp_path / "team.zip"
    manifest = backup_write(path=archive)
    files = [part for part in manifest["parts"] if part["kind"] == "file"]
    assert manifest["version"] == 2
    assert sorted(part["size"] for part in files) == sorted([len(picture), len(cover)])
    empty_the_database()
    there = folder(settings, tmp_path / "there")

    backup_restore(path=archive)

    assert len(files_in(there)) == 2
    assert kv_project_bytes(project_id=board.id) == used
    # Before carol signs in again, which changes her last_login.
    checks = backup_verify(path=archive)
    assert all(check.agrees for check in checks)
    assert {check.name for check in checks} >= {part["name"] for part in files}
    assert carol_downloads(logins, board) == (picture, cover)


def test_verify_names_an_attachment_file_that_is_missing_or_changed(
    settings: Any, tmp_path: Path
) -> None:
    bob_attaches_a_picture(settings, tmp_path)
    archive = tmp_path / "team.zip"
    backup_write(path=archive)
    empty_the_database()
    there = folder(settings, tmp_path / "there")
    backup_restore(path=archive)
    picture, cover = sorted(files_in(there), key=lambda p: p.name.endswith(".thumb.png"))
    picture.write_bytes(picture.read_bytes()[:-1] + b"!")
    cover.unlink()

    differing = {check.name for check in backup_verify(path=archive) if not check.agrees}

    assert differing == {
        f"attachments/{picture.parent.name}/{picture.name}",
        f"attachments/{cover.parent.name}/{cover.name}",
    }


def test_a_changed_attachment_file_is_refused_before_anything_is_written(
    settings: Any, tmp_path: Path
) -> None:
    bob_attaches_a_picture(settings, tmp_path)
    archive = tmp_path / "team.zip"
    manifest = backup_write(path=archive)
    (name,) = [p["name"] for p in manifest["parts"] if p["name"].endswith(".thumb.png")]
    empty_the_database()
    there = folder(settings, tmp_path / "there")
    rewrite(archive, name, lambda data: data[:-1] + b"!")

    with pytest.raises(KanbanError) as refused:
        backup_restore(path=archive)

    assert refused.value.code == ErrorCode.INVALID_ARGUMENT
    assert f"{name} does not match its checksum" in refused.value.message
    assert files_in(there) == []
    assert not User.objects.exists() and dump.is_empty()


def test_a_manifest_naming_a_file_outside_the_attachments_is_refused(
    settings: Any, tmp_path: Path
) -> None:
    bob_attaches_a_picture(settings, tmp_path)
    archive = tmp_path / "team.zip"
    manifest = backup_write(path=archive)
    (name,) = [p["name"] for p in manifest["parts"] if p["name"].endswith(".thumb.png")]
    evil = "attachments/../../outside.png"

    def renamed(data: bytes) -> bytes:
        found = json.loads(data)
        for part in found["parts"]:
            if part["name"] == name:
                part["name"] = evil
        return json.dumps(found).encode()

    members = {}
    with zipfile.ZipFile(archive) as zf:
        for member in zf.namelist():
            members[evil if member == name else member] = zf.read(member)
    members["manifest.json"] = renamed(members["manifest.json"])
    with zipfile.ZipFile(archive, "w") as zf:
        for member, data in members.items():
            zf.writestr(member, data)
    empty_the_database()
    there = folder(settings, tmp_path / "there" / "deep")

    with pytest.raises(KanbanError, match="not an attachment file's name") as refused:
        backup_restore(path=archive)

    assert refused.value.code == ErrorCode.INVALID_ARGUMENT
    assert files_in(there) == [] and not (tmp_path / "there" / "outside.png").exists()
    assert not User.objects.exists()


def test_a_failed_load_removes_the_files_the_restore_wrote(settings: Any, tmp_path: Path) -> None:
    bob_attaches_a_picture(settings, tmp_path)
    archive = tmp_path / "team.zip"
    backup_write(path=archive)
    empty_the_database()
    there = folder(settings, tmp_path / "there")

    def one_row_too_many(data: bytes) -> bytes:
        found = json.loads(data)
        for part in found["parts"]:
            if part["kind"] == "storage":
                part["rows"] += 1
        return json.dumps(found).encode()

    rewrite(archive, "manifest.json", one_row_too_many)

    with pytest.raises(KanbanError, match="rows, the manifest says"):
        backup_restore(path=archive)

    assert files_in(there) == []
    assert not User.objects.exists() and dump.is_empty()


def test_a_version_1_archive_without_files_still_restores_and_counts_the_metadata(
    settings: Any, tmp_path: Path
) -> None:
    logins, board = bob_attaches_a_picture(settings, tmp_path)
    used = kv_project_bytes(project_id=board.id)
    archive = tmp_path / "team.zip"
    backup_write(path=archive)
    members = {}
    with zipfile.ZipFile(archive) as zf:
        for member in zf.namelist():
            if not member.startswith("attachments/"):
                members[member] = zf.read(member)
    manifest = json.loads(members["manifest.json"])
    manifest["version"] = 1
    manifest["parts"] = [part for part in manifest["parts"] if part["kind"] != "file"]
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(archive, "w") as zf:
        for member, data in members.items():
            zf.writestr(member, data)
    empty_the_database()
    folder(settings, tmp_path / "there")

    backup_restore(path=archive)

    # Its metadata is back, and counted as it was (a delete frees what the metadata says);
    # the file, which a version 1 archive never held, is not.
    assert kv_project_bytes(project_id=board.id) == used
    (listed,) = attachment_list(
        user=User.objects.get(username="carol"), project_id=board.id, card="c1"
    )
    assert signed_in(logins["carol"]).get(listed["url"]).status_code == 404


def test_the_commands_say_how_many_files_travelled(
    settings: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bob_attaches_a_picture(settings, tmp_path)
    archive = tmp_path / "team.zip"
    call_command("backup", str(archive))
    assert "2 attachment files (" in capsys.readouterr().out
    empty_the_database()
    folder(settings, tmp_path / "there")

    call_command("restore", str(archive), "--verify")

    out = capsys.readouterr().out
    assert "and 2 attachment files from" in out and "Verified: all" in out
