"""The members page's Export links: a developer follows them with their session and gets
the board archive and the CSV; a guest is offered neither."""

from __future__ import annotations

import zipfile
from io import BytesIO
from typing import Any

import pytest
from django.test import Client

from tests.factories import a_board

pytestmark = pytest.mark.django_db


def client_of(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_developer_exports_the_board_from_its_members_page(
    alice: Any, bob: Any, charlie: Any
) -> None:
    project = a_board(owner=alice, name="Roadmap", members={bob: "developer", charlie: "guest"})
    page = client_of(bob).get(f"/boards/{project.id}/members/").content.decode()
    archive_link = f'href="/api/v1/projects/{project.id}/archive"'
    assert archive_link in page and f'href="/api/v1/projects/{project.id}/cards.csv"' in page

    download = client_of(bob).get(f"/api/v1/projects/{project.id}/archive")
    assert download.status_code == 200
    assert "board.json" in zipfile.ZipFile(BytesIO(download.content)).namelist()
    assert client_of(bob).get(f"/api/v1/projects/{project.id}/cards.csv").status_code == 200

    guest_page = client_of(charlie).get(f"/boards/{project.id}/members/").content.decode()
    assert archive_link not in guest_page
