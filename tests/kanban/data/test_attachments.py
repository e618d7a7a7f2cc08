"""Attachments on cards: bob (developer) attaches, carol (guest) reads, strangers and people
who left get nothing, and the bytes count in the board's quota."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core import signing
from PIL import Image

from kanban.data.attachments import (
    attachment_delete,
    attachment_list,
    attachment_open,
    attachment_upload,
    attachment_url,
)
from kanban.data.kv import Provenance, project_kv_delete, project_kv_set
from kanban.data.members import member_leave
from kanban.data.target import Target
from kanban.models import Project
from kanban.projects.lifecycle import project_delete
from storage import kv
from storage.errors import ErrorCode, KanbanError
from storage.kv import kv_project_bytes
from tests.factories import a_project, users

pytestmark = pytest.mark.django_db


def png(width: int = 800, height: int = 600) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 40, 40)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def files(settings: Any, tmp_path: Path) -> Path:
    """The attachments storage in a folder of the test's own."""
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    return tmp_path


@pytest.fixture
def people() -> dict[str, Any]:
    alice, bob, carol, dave = users("alice", "bob", "carol", "dave")
    return {"alice": alice, "bob": bob, "carol": carol, "dave": dave}


@pytest.fixture
def board(people: dict[str, Any]) -> Project:
    return a_project(
        name="Launch",
        owner=people["alice"],
        members={people["bob"]: "developer", people["carol"]: "guest"},
    )


def upload(user: Any, board: Project, data: bytes, name: str = "cover.png", **kw: Any) -> Any:
    return attachment_upload(
        user=user,
        project_id=board.id,
        card="c1",
        name=name,
        content_type=kw.pop("content_type", "image/png"),
        stream=io.BytesIO(data),
        **kw,
    )


def read(download: Any) -> bytes:
    with download.file as f:
        return bytes(f.read())


def test_bob_attaches_a_picture_and_carol_downloads_it_and_its_cover(
    files: Path, people: dict[str, Any], board: Project
) -> None:
    picture = png()
    shown = upload(people["bob"], board, picture)
    assert shown["name"] == "cover.png"
    assert shown["contentType"] == "image/png"
    assert shown["size"] == len(picture)
    assert shown["image"] == {"width": 800, "height": 600}
    assert shown["uploadedBy"] == "bob"

    carol = people["carol"]
    (listed,) = attachment_list(user=carol, project_id=board.id, card="c1")
    assert listed == {**shown, "url": listed["url"], "thumbnailUrl": listed["thumbnailUrl"]}
    assert read(attachment_open(user=carol, token=listed["url"].split("/")[2])) == picture
    url = attachment_url(user=carol, project_id=board.id, card="c1", attachment_id=shown["id"])
    download = attachment_open(user=carol, token=url.split("/")[2])
    assert (download.name, download.content_type) == ("cover.png", "image/png")
    assert read(download) == picture

    cover = attachment_url(
        user=carol, project_id=board.id, card="c1", attachment_id=shown["id"], thumbnail=True
    )
    thumbnail = Image.open(io.BytesIO(read(attachment_open(user=carol, token=cover.split("/")[2]))))
    assert thumbnail.format == "PNG"
    assert thumbnail.size == (320, 240)


def test_a_file_that_is_not_an_image_is_served_as_bytes_whatever_its_name_claims(
    files: Path, people: dict[str, Any], board: Project
) -> None:
    page = b"<html><script>alert(document.cookie)</script></html>"
    shown = upload(people["bob"], board, page, name="../../evil.html", content_type="text/html")
    assert shown["name"] == "evil.html"
    assert shown["contentType"] == "application/octet-stream"
    assert shown["image"] is None
    url = attachment_url(
        user=people["bob"], project_id=board.id, card="c1", attachment_id=shown["id"]
    )
    download = attachment_open(user=people["bob"], token=url.split("/")[2])
    assert download.content_type == "application/octet-stream"
    assert read(download) == page


def test_a_guest_cannot_attach_and_a_stranger_sees_nothing(
    files: Path, people: dict[str, Any], board: Project
) -> None:
    with pytest.raises(KanbanError) as refused:
        upload(people["carol"], board, png())
    assert refused.value.code == ErrorCode.FORBIDDEN
    shown = upload(people["bob"], board, png())
    with pytest.raises(KanbanError) as stranger:
        attachment_list(user=people["dave"], project_id=board.id, card="c1")
    assert stranger.value.code == ErrorCode.NOT_FOUND
    # A link made for carol does nothing for dave, who holds it.
    url = attachment_url(
        user=people["carol"], project_id=board.id, card="c1", attachment_id=shown["id"]
    )
    with pytest.raises(KanbanError) as borrowed:
        attachment_open(user=people["dave"], token=url.split("/")[2])
    assert borrowed.value.code == ErrorCode.NOT_FOUND
    assert list(files.rglob("*")) != []  # nothing of it went either


def test_carol_gets_nothing_from_an_earlier_link_once_she_left_the_board(
    files: Path, people: dict[str, Any], board: Project
) -> None:
    carol = people["carol"]
    shown = upload(people["bob"], board, png())
    url = attachment_url(user=carol, project_id=board.id, card="c1", attachment_id=shown["id"])
    member_leave(actor=carol, project_id=board.id)
    with pytest.raises(KanbanError) as refused:
        attachment_open(user=carol, token=url.split("/")[2])
    assert refused.value.code == ErrorCode.NOT_FOUND


def test_an_expired_link_is_refused(
    files: Path, settings: Any, people: dict[str, Any], board: Project
) -> None:
    shown = upload(people["bob"], board, png())
    url = attachment_url(
        user=people["carol"], project_id=board.id, card="c1", attachment_id=shown["id"]
    )
    settings.KANBAN_ATTACHMENT_URL_SECONDS = 0
    with pytest.raises(KanbanError) as expired:
        attachment_open(user=people["carol"], token=url.split("/")[2])
    assert expired.value.code == ErrorCode.FORBIDDEN
    assert "expired" in expired.value.message
    with pytest.raises(KanbanError) as forged:
        attachment_open(user=people["carol"], token=signing.dumps({"u": people["carol"].pk}))
    assert forged.value.code == ErrorCode.NOT_FOUND


def test_a_file_over_the_limit_is_refused_and_nothing_is_kept(
    files: Path, settings: Any, people: dict[str, Any], board: Project
) -> None:
    settings.KANBAN_ATTACHMENT_BYTES = 1000
    with pytest.raises(KanbanError) as refused:
        upload(people["bob"], board, b"x" * 1001, name="big.bin")
    assert refused.value.code == ErrorCode.TOO_LARGE
    assert attachment_list(user=people["bob"], project_id=board.id, card="c1") == []
    assert [p for p in files.rglob("*") if p.is_file()] == []


def test_the_bytes_count_in_the_quota_and_deleting_frees_them(
    files: Path,
    settings: Any,
    people: dict[str, Any],
    board: Project,
    django_capture_on_commit_callbacks: Any,
) -> None:
    bob = people["bob"]
    before = kv_project_bytes(project_id=board.id)
    data = b"\x00\x01" * 5000
    shown = upload(bob, board, data, name="data.bin")
    used = kv_project_bytes(project_id=board.id)
    assert used - before > len(data)  # the file and its metadata

    settings.KANBAN_PROJECT_BYTES = used + 5000
    with pytest.raises(KanbanError) as refused:
        upload(bob, board, data, name="again.bin")
    assert refused.value.code == ErrorCode.QUOTA_EXCEEDED
    assert kv_project_bytes(project_id=board.id) == used
    assert len([p for p in files.rglob("*") if p.is_file()]) == 1  # the refused one's went

    with django_capture_on_commit_callbacks(execute=True):
        attachment_delete(user=bob, project_id=board.id, card="c1", attachment_id=shown["id"])
    assert kv_project_bytes(project_id=board.id) < before + len(data)
    assert [p for p in files.rglob("*") if p.is_file()] == []
    upload(bob, board, data, name="again.bin")  # room again


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")  # Pillow's, expected
def test_a_decompression_bomb_is_refused_before_it_is_decoded(
    files: Path, people: dict[str, Any], board: Project
) -> None:
    bomb = io.BytesIO()
    Image.new("1", (9_000, 9_000)).save(bomb, format="PNG")  # 81 megapixels in ~10 KB
    assert len(bomb.getvalue()) < 100_000
    with pytest.raises(KanbanError) as refused:
        upload(people["bob"], board, bomb.getvalue(), name="bomb.png")
    assert refused.value.code == ErrorCode.TOO_LARGE
    assert attachment_list(user=people["bob"], project_id=board.id, card="c1") == []


def test_deleting_the_board_deletes_its_files(
    files: Path, people: dict[str, Any], board: Project, django_capture_on_commit_callbacks: Any
) -> None:
    upload(people["bob"], board, png())
    upload(people["bob"], board, b"notes", name="notes.txt")
    assert len([p for p in files.rglob("*") if p.is_file()]) == 3  # two files and a cover
    with django_capture_on_commit_callbacks(execute=True):
        project_delete(project=board)
    assert [p for p in files.rglob("*") if p.is_file()] == []


def test_deleting_an_attachment_nobody_has_is_not_found(
    files: Path, people: dict[str, Any], board: Project
) -> None:
    with pytest.raises(KanbanError) as missing:
        attachment_delete(user=people["bob"], project_id=board.id, card="c1", attachment_id="x")
    assert missing.value.code == ErrorCode.NOT_FOUND


def test_the_cards_attachments_value_is_written_by_the_attachments_service_only(
    files: Path, people: dict[str, Any], board: Project
) -> None:
    """A forged size would free quota on delete, and a forged id would name another file."""
    values: list[Any] = [{"attachments": []}, None]
    for value in values:
        with pytest.raises(KanbanError) as refused:
            project_kv_set(
                target=Target(user=people["bob"], project_id=board.id),
                key="attachments:c1",
                value=value,
                provenance=Provenance(via="api"),
            )
        assert refused.value.code == ErrorCode.INVALID_ARGUMENT
    with pytest.raises(KanbanError):
        project_kv_delete(
            target=Target(user=people["bob"], project_id=board.id),
            key="attachments:c1",
            provenance=Provenance(via="api"),
        )


def test_a_forged_item_that_reached_the_metadata_names_no_other_boards_file(
    files: Path, people: dict[str, Any], board: Project
) -> None:
    """However it got there (an old backup, a hand-made archive): ids are the service's."""
    other = a_project(name="Secret", owner=people["alice"])
    secret = attachment_upload(
        user=people["alice"],
        project_id=other.id,
        card="s1",
        name="payroll.csv",
        content_type="text/csv",
        stream=io.BytesIO(b"alice,1000000"),
    )
    forged_id = f"../{other.id}/{secret['id']}"
    forged = {
        "id": forged_id,
        "name": "innocent.txt",
        "contentType": "text/plain",
        "size": 10**12,
        "image": None,
        "uploadedBy": "bob",
        "uploadedAt": "2026-01-01T00:00:00+00:00",
    }
    kv.kv_set(
        dataset=kv.Dataset(board.id, "kv", None),
        key="attachments:c1",
        value={"attachments": [forged]},
        source={"via": "cli"},
    )
    assert attachment_list(user=people["bob"], project_id=board.id, card="c1") == []
    with pytest.raises(KanbanError) as refused:
        attachment_url(user=people["bob"], project_id=board.id, card="c1", attachment_id=forged_id)
    assert refused.value.code == ErrorCode.NOT_FOUND
