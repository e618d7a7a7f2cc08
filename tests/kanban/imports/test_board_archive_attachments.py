"""A board's attachments travel in its archive (version 2): alice exports a board where bob
attached a screenshot and a log, dave imports it on a fresh deployment and gets the same
files, byte for byte, with working covers, counted in his board's quota. An archive too big
for the quota makes nothing and leaves no file behind; a second import replaces the files
it brought; a version 1 archive (no files) still imports."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model

from kanban.data.attachments import attachment_list, attachment_open, attachment_upload
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from kanban.imports.board_archive import board_archive_import
from kanban.imports.board_export import board_export
from kanban.models import Project
from kanban.projects.lifecycle import project_delete
from storage.errors import ErrorCode, KanbanError
from storage.kv import kv_project_bytes
from tests.factories import a_project, users
from tests.kanban.data.test_attachments import files, png

__all__ = ["files"]  # a fixture, used by name

pytestmark = pytest.mark.django_db

LOG = b"2026-03-01 login redirect loops\n" * 200


def stored_files(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


def read(user: Any, url: str) -> bytes:
    download = attachment_open(user=user, token=url.split("/")[2])
    with download.file as f:
        return bytes(f.read())


@pytest.fixture
def board_with_files(files: Path) -> Project:
    """alice's board; bob attached a screenshot and a log to card c1."""
    alice, bob = users("alice", "bob")
    board = a_project(name="Launch", owner=alice, members={bob: "developer"})
    project_kv_set(
        target=Target(user=bob, project_id=board.id),
        key="card:c1",
        value={"id": "c1", "title": "Broken login", "column": "todo"},
        provenance=Provenance(via="api"),
    )
    for name, data, kind in (("shot.png", png(), "image/png"), ("app.log", LOG, "text/plain")):
        attachment_upload(
            user=bob,
            project_id=board.id,
            card="c1",
            name=name,
            content_type=kind,
            stream=io.BytesIO(data),
        )
    return board


def fresh_deployment(folder: Path) -> Any:
    """dave alone, and an empty attachments storage: nothing of alice's board is left."""
    for project in Project.objects.all():
        project_delete(project=project)
    for path in folder.rglob("*"):
        if path.is_file():
            path.unlink()
    get_user_model().objects.all().delete()
    return get_user_model().objects.create_user("dave")


def test_the_attachments_come_back_byte_for_byte_with_their_covers(
    files: Path, board_with_files: Project, django_capture_on_commit_callbacks: Any
) -> None:
    alice = get_user_model().objects.get(username="alice")
    before = {
        item["name"]: read(alice, item["url"])
        for item in attachment_list(user=alice, project_id=board_with_files.id, card="c1")
    }
    archive = board_export(actor=alice, project_id=board_with_files.id)
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        board = json.loads(zf.read("board.json"))
        manifest = json.loads(zf.read("manifest.json"))
    assert manifest["version"] == 2 and board["version"] == 2
    kinds = [part["kind"] for part in manifest["parts"]]
    assert kinds.count("attachment") == 3  # the screenshot, its cover, the log
    schema = json.loads(
        (Path(django_settings.BASE_DIR) / "docs/board-archive.schema.json").read_text()
    )
    jsonschema.validate(board, schema)

    with django_capture_on_commit_callbacks(execute=True):
        dave = fresh_deployment(files)
    assert stored_files(files) == []
    report = board_archive_import(actor=dave, data=archive)

    assert report.counts["attachments"] == 2 and report.project_id is not None
    listed = attachment_list(user=dave, project_id=report.project_id, card="c1")
    assert {item["name"]: read(dave, item["url"]) for item in listed} == before
    (shot,) = [item for item in listed if item["name"] == "shot.png"]
    assert shot["image"] == {"width": 800, "height": 600} and shot["uploadedBy"] == "bob"
    assert read(dave, shot["thumbnailUrl"]).startswith(b"\x89PNG")
    assert len(stored_files(files)) == 3
    # The files count in the new board's quota.
    assert kv_project_bytes(project_id=report.project_id) > len(LOG) + len(before["shot.png"])


def test_an_archive_past_the_quota_makes_nothing_and_leaves_no_file(
    files: Path, board_with_files: Project, settings: Any
) -> None:
    alice = get_user_model().objects.get(username="alice")
    archive = board_export(actor=alice, project_id=board_with_files.id)
    dave = get_user_model().objects.create_user("dave")
    on_disk = stored_files(files)
    projects = Project.objects.count()
    settings.KANBAN_PROJECT_BYTES = len(LOG) + 1000
    with pytest.raises(KanbanError) as refused:
        board_archive_import(actor=dave, data=archive)
    assert refused.value.code == ErrorCode.TOO_LARGE
    assert Project.objects.count() == projects
    assert stored_files(files) == on_disk


def test_a_file_past_the_attachment_limit_is_too_large(
    files: Path, board_with_files: Project, settings: Any
) -> None:
    alice = get_user_model().objects.get(username="alice")
    archive = board_export(actor=alice, project_id=board_with_files.id)
    settings.KANBAN_ATTACHMENT_BYTES = 1000
    with pytest.raises(KanbanError) as refused:
        board_archive_import(actor=alice, data=archive)
    assert refused.value.code == ErrorCode.TOO_LARGE


def test_a_second_import_replaces_the_files_it_brought(
    files: Path, board_with_files: Project, django_capture_on_commit_callbacks: Any
) -> None:
    alice = get_user_model().objects.get(username="alice")
    archive = board_export(actor=alice, project_id=board_with_files.id)
    dave = get_user_model().objects.create_user("dave")
    with django_capture_on_commit_callbacks(execute=True):
        first = board_archive_import(actor=dave, data=archive)
    assert first.project_id is not None
    usage = kv_project_bytes(project_id=first.project_id)
    first_files = [path for path in stored_files(files) if path.startswith(str(first.project_id))]
    assert len(first_files) == 3
    # dave attaches one more file to c1 on his copy: the archive's c1 replaces it.
    attachment_upload(
        user=dave,
        project_id=first.project_id,
        card="c1",
        name="mine.txt",
        content_type="text/plain",
        stream=io.BytesIO(b"dave's notes"),
    )

    with django_capture_on_commit_callbacks(execute=True):
        second = board_archive_import(actor=dave, data=archive)

    assert second.project_id == first.project_id
    listed = attachment_list(user=dave, project_id=first.project_id, card="c1")
    assert sorted(item["name"] for item in listed) == ["app.log", "shot.png"]
    now = [path for path in stored_files(files) if path.startswith(str(first.project_id))]
    assert len(now) == 3 and not set(now) & set(first_files)  # new ones, the old ones gone
    assert read(dave, listed[0]["url"])
    assert kv_project_bytes(project_id=first.project_id) >= usage - 1000  # no file bytes leaked
    assert kv_project_bytes(project_id=first.project_id) < usage + len(LOG)


def test_a_version_1_archive_still_imports_without_its_attachments(
    files: Path, board_with_files: Project
) -> None:
    alice = get_user_model().objects.get(username="alice")
    archive = board_export(actor=alice, project_id=board_with_files.id)
    dave = get_user_model().objects.create_user("dave")

    report = board_archive_import(actor=dave, data=as_version_1(archive))

    assert report.project_id is not None and report.counts["attachments"] == 0
    assert report.counts["cards"] == 1
    # Version 1 carried the metadata but not the files: none of it is kept.
    assert attachment_list(user=dave, project_id=report.project_id, card="c1") == []


def as_version_1(archive: bytes) -> bytes:
    """The archive as version 1 wrote it: no attachment parts, ``attachments`` empty."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as zf, zipfile.ZipFile(out, "w") as copy:
        board = json.loads(zf.read("board.json"))
        board.update(version=1, attachments=[])
        text = (json.dumps(board, indent=1, sort_keys=True) + "\n").encode()
        parts = [{"name": "board.json", "kind": "board", "bytes": len(text)}]
        parts[0]["sha256"] = hashlib.sha256(text).hexdigest()
        copy.writestr("board.json", text)
        manifest = json.loads(zf.read("manifest.json"))
        for part in manifest["parts"]:
            if part["kind"] == "file":
                copy.writestr(part["name"], zf.read(part["name"]))
                parts.append(part)
        copy.writestr(
            "manifest.json",
            json.dumps({"format": "kanban-board-archive", "version": 1, "parts": parts}),
        )
    return out.getvalue()
