"""A card's attachments live and die with it: deleted for good (through the bridge, REST or
MCP) its files go and their bytes come back to the board's quota; archived, or deleted in a
transaction that rolls back, it keeps them. And an upload is written bytes: past its
writer's rate it is refused with nothing kept."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.db import transaction
from rest_framework.test import APIClient

from kanban.accounts.tokens import token_create
from kanban.bridge.frames import Request
from kanban.bridge.ops import bridge_call
from kanban.data.attachments import attachment_list, attachment_upload
from kanban.data.kv import (
    Provenance,
    project_kv_delete,
    project_kv_history_purge,
    project_kv_set,
)
from kanban.data.target import Target
from kanban.mcp.tools import tool_call
from kanban.models import Project
from kanban.quotas.deployment import write_bytes_reset
from storage import kv
from storage.errors import ErrorCode, KanbanError
from storage.kv import kv_history_prune, kv_project_bytes
from storage.writes import ANY
from tests.kanban.data.test_attachments import board, files, people, png, upload

__all__ = ["board", "files", "people"]  # fixtures, used by name

pytestmark = pytest.mark.django_db


def stored_files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.rglob("*") if path.is_file())


def a_card_with_a_picture(bob: Any, board: Project) -> dict[str, Any]:
    project_kv_set(
        target=Target(user=bob, project_id=board.id),
        key="card:c1",
        value={"id": "c1", "title": "Broken login", "column": "todo"},
        provenance=Provenance(via="api"),
    )
    return upload(bob, board, png())


def bridge_deletes(bob: Any, board: Project) -> None:
    # The Board deletes a card for good by leaving a tombstone under its key.
    request = Request(
        id=1,
        op="set",
        alias=None,
        key="card:c1",
        value={"id": "c1", "deleted": True},
        expected_revision=ANY,
    )
    bridge_call(user=bob, consumer_id=board.id, page="index.html", request=request)


def rest_deletes(bob: Any, board: Project) -> None:
    client = APIClient()
    _, plaintext = token_create(user=bob)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    response = client.delete(f"/api/v1/projects/{board.id}/kv/{quote('card:c1', safe='')}")
    assert response.json() == {"deleted": True}


def mcp_deletes(bob: Any, board: Project) -> None:
    token, _ = token_create(user=bob, project_id=board.id)
    tool_call(
        token=token,
        name="kv_store",
        arguments={"action": "set", "key": "card:c1", "value": {"id": "c1", "deleted": True}},
    )


@pytest.mark.parametrize("delete", [bridge_deletes, rest_deletes, mcp_deletes])
def test_a_card_deleted_for_good_takes_its_files_and_gives_their_bytes_back(
    files: Path,
    people: dict[str, Any],
    board: Project,
    delete: Callable[[Any, Project], None],
    django_capture_on_commit_callbacks: Any,
) -> None:
    bob = people["bob"]
    before = kv_project_bytes(project_id=board.id)
    a_card_with_a_picture(bob, board)
    assert len(stored_files(files)) == 2  # the picture and its cover
    assert kv_project_bytes(project_id=board.id) > before

    with django_capture_on_commit_callbacks(execute=True):
        delete(bob, board)

    assert stored_files(files) == []
    assert attachment_list(user=bob, project_id=board.id, card="c1") == []
    dataset = kv.Dataset(board.id)
    assert kv.kv_get(dataset=dataset, key="attachments:c1") is None
    # What is left counted: the card's tombstone or deletion and the kept versions, no file.
    history = kv.kv_history(dataset=dataset, key="attachments:c1")
    assert history[0].deleted and (history[0].source or {}).get("user") == "bob"


def test_an_archived_card_keeps_its_attachments(
    files: Path, people: dict[str, Any], board: Project, django_capture_on_commit_callbacks: Any
) -> None:
    bob = people["bob"]
    shown = a_card_with_a_picture(bob, board)
    with django_capture_on_commit_callbacks(execute=True):
        project_kv_set(
            target=Target(user=bob, project_id=board.id),
            key="card:c1",
            value={"id": "c1", "title": "Broken login", "column": "todo", "archived": True},
            provenance=Provenance(via="api"),
        )
    assert [item["id"] for item in attachment_list(user=bob, project_id=board.id, card="c1")] == [
        shown["id"]
    ]
    assert len(stored_files(files)) == 2


def test_a_delete_rolled_back_keeps_the_files_and_their_metadata(
    files: Path, people: dict[str, Any], board: Project, django_capture_on_commit_callbacks: Any
) -> None:
    bob = people["bob"]
    a_card_with_a_picture(bob, board)
    usage = kv_project_bytes(project_id=board.id)

    class Undo(Exception):
        pass

    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(Undo),
        transaction.atomic(),
    ):
        project_kv_delete(
            target=Target(user=bob, project_id=board.id),
            key="card:c1",
            provenance=Provenance(via="api"),
        )
        raise Undo

    assert len(attachment_list(user=bob, project_id=board.id, card="c1")) == 1
    assert len(stored_files(files)) == 2
    assert kv_project_bytes(project_id=board.id) == usage


def test_purging_and_pruning_the_deleted_cards_versions_leave_no_file_behind(
    files: Path,
    people: dict[str, Any],
    board: Project,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    alice, bob = people["alice"], people["bob"]
    a_card_with_a_picture(bob, board)
    with django_capture_on_commit_callbacks(execute=True):
        project_kv_delete(
            target=Target(user=bob, project_id=board.id),
            key="card:c1",
            provenance=Provenance(via="api"),
        )
    for key in ("card:c1", "attachments:c1"):
        project_kv_history_purge(user=alice, project_id=board.id, key=key)
    settings.KANBAN_HISTORY_DAYS = 0
    kv_history_prune()
    assert stored_files(files) == []
    # Nothing of the card is counted any more: neither its values nor its files.
    assert kv_project_bytes(project_id=board.id) == 0


def test_an_upload_past_the_writers_byte_rate_is_rate_limited_and_keeps_nothing(
    files: Path, people: dict[str, Any], board: Project, settings: Any
) -> None:
    settings.KANBAN_WRITE_BYTES_PER_USER = 1.0
    settings.KANBAN_WRITE_BYTES_BURST = 2.0**20
    write_bytes_reset(shared_too=True)
    bob = people["bob"]
    usage = kv_project_bytes(project_id=board.id)
    try:
        with pytest.raises(KanbanError) as refused:
            attachment_upload(
                user=bob,
                project_id=board.id,
                card="c1",
                name="dump.bin",
                content_type="application/octet-stream",
                stream=io.BytesIO(b"x" * (2**20 + 1)),
            )
        assert refused.value.code == ErrorCode.RATE_LIMITED
        assert stored_files(files) == []
        assert attachment_list(user=bob, project_id=board.id, card="c1") == []
        assert kv_project_bytes(project_id=board.id) == usage
    finally:
        write_bytes_reset(shared_too=True)
