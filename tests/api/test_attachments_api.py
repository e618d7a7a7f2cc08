"""Attachments over REST: bob uploads a picture to a card of alice's board, charlie (a guest)
lists it and downloads it through its link, as a download that can never run as a page."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from PIL import Image

from kanban.data.members import member_leave
from kanban.models import Project
from tests.api.conftest import People, client_for

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def files(settings: Any, tmp_path: Path) -> Path:
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    return tmp_path


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (640, 480), (20, 120, 200)).save(out, format="PNG")
    return out.getvalue()


def upload(user: Any, board: Project, data: bytes, name: str, card: str = "c1") -> Any:
    body = io.BytesIO(data)
    body.name = name
    return client_for(user).post(
        f"/api/v1/projects/{board.id}/attachments/",
        {"card": card, "file": body},
        format="multipart",
    )


def listed(user: Any, board: Project, card: str = "c1") -> Any:
    return client_for(user).get(f"/api/v1/projects/{board.id}/attachments/?card={card}")


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_bob_uploads_a_picture_and_charlie_downloads_it_as_a_download(
    people: People, board: Project
) -> None:
    picture = png()
    created = upload(people.bob, board, picture, "Screen shot é.png")
    assert created.status_code == 201, created.json()
    assert created.json()["contentType"] == "image/png"
    assert created.json()["image"] == {"width": 640, "height": 480}

    found = listed(people.charlie, board)
    assert found.status_code == 200
    (attachment,) = found.json()["attachments"]
    assert attachment["id"] == created.json()["id"]

    response = signed_in(people.charlie).get(attachment["url"])
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == picture  # type: ignore[attr-defined]
    assert response["Content-Type"] == "image/png"
    assert response["Content-Disposition"] == (
        "inline; filename*=UTF-8''Screen%20shot%20%C3%A9.png"
    )
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "sandbox; default-src 'none'"

    cover = signed_in(people.charlie).get(attachment["thumbnailUrl"])
    thumbnail = Image.open(io.BytesIO(b"".join(cover.streaming_content)))  # type: ignore[attr-defined]
    assert thumbnail.size == (320, 240)


def test_a_page_is_served_as_bytes_never_as_html(people: People, board: Project) -> None:
    upload(people.bob, board, b"<script>alert(1)</script>", "page.html")
    (attachment,) = listed(people.bob, board).json()["attachments"]
    response = signed_in(people.bob).get(attachment["url"])
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"].startswith("attachment;")
    assert attachment["thumbnailUrl"] is None


def test_strangers_guests_and_people_who_left_get_nothing(people: People, board: Project) -> None:
    assert upload(people.charlie, board, png(), "a.png").status_code == 403
    created = upload(people.bob, board, png(), "a.png").json()
    assert listed(people.dave, board).status_code == 404
    (attachment,) = listed(people.charlie, board).json()["attachments"]

    # charlie's link does nothing for dave, nor for anyone signed out
    assert signed_in(people.dave).get(attachment["url"]).status_code == 404
    assert Client().get(attachment["url"]).status_code in (401, 403)

    member_leave(actor=people.charlie, project_id=board.id)
    assert signed_in(people.charlie).get(attachment["url"]).status_code == 404
    assert created["id"] == attachment["id"]


def test_an_expired_link_is_refused(people: People, board: Project, settings: Any) -> None:
    upload(people.bob, board, png(), "a.png")
    (attachment,) = listed(people.charlie, board).json()["attachments"]
    settings.KANBAN_ATTACHMENT_URL_SECONDS = 0
    response = signed_in(people.charlie).get(attachment["url"])
    assert response.status_code == 403
    assert response.json()["code"] == "forbidden"


def test_too_large_and_quota_exceeded_write_nothing(
    people: People, board: Project, settings: Any
) -> None:
    settings.KANBAN_ATTACHMENT_BYTES = 100
    too_big = upload(people.bob, board, b"x" * 101, "big.bin")
    assert (too_big.status_code, too_big.json()["code"]) == (413, "too_large")

    settings.KANBAN_ATTACHMENT_BYTES = 10**6
    settings.KANBAN_PROJECT_BYTES = 50_000
    full = upload(people.bob, board, b"x" * 60_000, "full.bin")
    assert (full.status_code, full.json()["code"]) == (409, "quota_exceeded")
    assert listed(people.bob, board).json()["attachments"] == []


def test_bob_deletes_an_attachment_and_its_link_ends(
    people: People, board: Project, django_capture_on_commit_callbacks: Any, files: Path
) -> None:
    created = upload(people.bob, board, b"notes", "notes.txt").json()
    (attachment,) = listed(people.bob, board).json()["attachments"]
    url = f"/api/v1/projects/{board.id}/attachments/{created['id']}?card=c1"
    assert client_for(people.charlie).delete(url).status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        assert client_for(people.bob).delete(url).status_code == 204
    assert listed(people.bob, board).json()["attachments"] == []
    assert signed_in(people.bob).get(attachment["url"]).status_code == 404
    assert [p for p in files.rglob("*") if p.is_file()] == []
    assert client_for(people.bob).delete(url).status_code == 404
