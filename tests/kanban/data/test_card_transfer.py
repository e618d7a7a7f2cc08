"""A card moves to another board with everything on it: alice runs Launch and Ops; bob,
a developer on both, moves the broken-login card (carol's and his comments, a checklist, a
screenshot) from Launch to Ops, or copies it. carol, a guest on Launch, may copy it to her
own board but not move it; dave, who is on neither, gets nothing."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from kanban.data.attachments import attachment_list, attachment_open, attachment_upload
from kanban.data.board import layout
from kanban.data.board.card_transfer import card_copy, card_move
from kanban.data.kv import Provenance
from kanban.models import Project
from storage import engine
from storage.errors import ErrorCode, KanbanError
from storage.kv import KvChange, add_kv_listener, kv_project_bytes
from storage.namespaces import project_kv
from tests.factories import a_board, a_project, board_data, users
from tests.kanban.data.test_attachments import files, png

__all__ = ["files"]  # a fixture, used by name

pytestmark = pytest.mark.django_db

API = Provenance(via="api")
COMMENTS = [
    {"id": "k1", "author": "carol", "text": "Still loops on Safari", "at": "2026-03-01T09:30:00Z"},
    {"id": "k2", "author": "bob", "text": "Looking", "at": "2026-03-02T10:00:00Z"},
]
CHECKLIST = [{"id": "i1", "text": "Reproduce", "done": True}]


@pytest.fixture
def world(files: Path) -> dict[str, Any]:
    alice, bob, carol, dave = users("alice", "bob", "carol", "dave")
    launch = a_board(owner=alice, name="Launch", members={bob: "developer", carol: "guest"})
    ops = a_board(owner=alice, name="Ops", members={bob: "developer", carol: "guest"})
    board_data(
        launch,
        cards={
            "c1": {
                "title": "Broken login",
                "checklist": CHECKLIST,
                "assignees": ["bob", "carol"],
                "commentCount": 2,
            },
            "c2": {"title": "Press kit"},
        },
        comments={"c1": COMMENTS},
    )
    attachment_upload(
        user=bob,
        project_id=launch.id,
        card="c1",
        name="shot.png",
        content_type="image/png",
        stream=io.BytesIO(png()),
    )
    return {"alice": alice, "bob": bob, "carol": carol, "dave": dave, "launch": launch, "ops": ops}


def value(board: Project, key: str) -> Any:
    stored = engine.get_value(project_kv(board.id, key))
    return None if stored is None else stored.value


def read(user: Any, url: str) -> bytes:
    download = attachment_open(user=user, token=url.split("/")[2])
    with download.file as f:
        return bytes(f.read())


def stored_files(folder: Path, board: Project) -> list[str]:
    return sorted(path.name for path in (folder / str(board.id)).glob("*"))


def test_bob_moves_the_card_with_its_comments_checklist_and_screenshot(
    files: Path, world: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    bob, launch, ops = world["bob"], world["launch"], world["ops"]
    (shot,) = attachment_list(user=bob, project_id=launch.id, card="c1")
    picture = read(bob, shot["url"])
    usage = kv_project_bytes(project_id=launch.id)
    seen: list[KvChange] = []
    remove = add_kv_listener(seen.extend)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            moved = card_move(
                user=bob, project_id=launch.id, card="c1", target_project_id=ops.id, provenance=API
            )
    finally:
        remove()

    new = moved["card"]
    assert moved["moved"] and moved["comments"] == 2 and moved["attachments"] == 1
    card = layout.normalize_card(new, value(ops, layout.card_key(new)))
    assert card is not None
    assert card["title"] == "Broken login" and card["checklist"] == CHECKLIST
    assert card["assignees"] == ["bob", "carol"] and card["column"] == "todo"
    assert value(ops, layout.INDEX_KEY)[-1] == new
    assert value(ops, "comments:" + new) == COMMENTS  # carol's comment still hers
    (there,) = attachment_list(user=bob, project_id=ops.id, card=new)
    assert read(bob, there["url"]) == picture and read(bob, there["thumbnailUrl"])

    # Gone from Launch, in the same commit: deleted for good as the Board deletes a card.
    assert value(launch, "card:c1") == {"id": "c1", "deleted": True}
    assert "c1" not in value(launch, layout.INDEX_KEY)
    assert value(launch, "comments:c1") is None and value(launch, "attachments:c1") is None
    assert stored_files(files, launch) == []
    assert kv_project_bytes(project_id=launch.id) < usage - len(picture)
    # Both boards heard of it once it committed.
    assert {change.dataset.project_id for change in seen} == {launch.id, ops.id}


def test_bob_copies_the_card_and_both_boards_keep_their_own_files(
    files: Path, world: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    bob, launch, ops = world["bob"], world["launch"], world["ops"]
    with django_capture_on_commit_callbacks(execute=True):
        copied = card_copy(
            user=bob, project_id=launch.id, card="c1", target_project_id=ops.id, provenance=API
        )
    assert not copied["moved"]
    assert layout.normalize_card("c1", value(launch, "card:c1")) is not None
    assert len(attachment_list(user=bob, project_id=launch.id, card="c1")) == 1
    assert len(attachment_list(user=bob, project_id=ops.id, card=copied["card"])) == 1
    assert len(stored_files(files, launch)) == 2 and len(stored_files(files, ops)) == 2

    # A copy on its own board sits just after the card.
    twin = card_copy(
        user=bob, project_id=launch.id, card="c1", target_project_id=launch.id, provenance=API
    )
    assert value(launch, layout.INDEX_KEY) == ["c1", twin["card"], "c2"]


def test_carol_a_guest_copies_to_her_own_board_but_cannot_move(world: dict[str, Any]) -> None:
    carol, launch, ops = world["carol"], world["launch"], world["ops"]
    with pytest.raises(KanbanError) as refused:
        card_move(
            user=carol, project_id=launch.id, card="c1", target_project_id=ops.id, provenance=API
        )
    assert refused.value.code == ErrorCode.FORBIDDEN
    with pytest.raises(KanbanError) as not_there:  # she only reads Ops
        card_copy(
            user=carol, project_id=launch.id, card="c1", target_project_id=ops.id, provenance=API
        )
    assert not_there.value.code == ErrorCode.FORBIDDEN

    mine = a_board(owner=carol, name="Carol's")
    copied = card_copy(
        user=carol, project_id=launch.id, card="c1", target_project_id=mine.id, provenance=API
    )
    card = layout.normalize_card(copied["card"], value(mine, layout.card_key(copied["card"])))
    assert card is not None and card["assignees"] == ["carol"]  # bob is not on her board
    assert layout.normalize_card("c1", value(launch, "card:c1")) is not None


def test_clear_refusals_that_write_nothing(files: Path, world: dict[str, Any]) -> None:
    bob, dave, launch, ops = world["bob"], world["dave"], world["launch"], world["ops"]
    inventory = a_project(name="Inventory", owner=world["alice"], members={bob: "developer"})
    before = value(ops, layout.INDEX_KEY)

    def refused(code: ErrorCode, user: Any, target: Project, card: str = "c1", **kw: Any) -> str:
        with pytest.raises(KanbanError) as error:
            card_move(
                user=user,
                project_id=launch.id,
                card=card,
                target_project_id=target.id,
                provenance=API,
                **kw,
            )
        assert error.value.code == code
        return error.value.message

    assert refused(ErrorCode.NOT_FOUND, dave, ops)
    assert "not a Board" in refused(ErrorCode.INVALID_ARGUMENT, bob, inventory)
    assert "no card" in refused(ErrorCode.NOT_FOUND, bob, ops, card="nope")
    assert "column" in refused(ErrorCode.INVALID_ARGUMENT, bob, ops, column="nowhere")
    assert "already" in refused(ErrorCode.INVALID_ARGUMENT, bob, launch)
    assert value(ops, layout.INDEX_KEY) == before
    assert len(stored_files(files, launch)) == 2 and stored_files(files, ops) == []


def test_a_target_without_room_is_quota_exceeded_and_keeps_no_copy(
    files: Path, world: dict[str, Any], settings: Any
) -> None:
    bob, launch, ops = world["bob"], world["launch"], world["ops"]
    settings.KANBAN_PROJECT_BYTES = kv_project_bytes(project_id=ops.id) + 2000
    with pytest.raises(KanbanError) as refused:
        card_move(
            user=bob, project_id=launch.id, card="c1", target_project_id=ops.id, provenance=API
        )
    assert refused.value.code == ErrorCode.QUOTA_EXCEEDED
    assert stored_files(files, ops) == [] and len(stored_files(files, launch)) == 2
    assert layout.normalize_card("c1", value(launch, "card:c1")) is not None
