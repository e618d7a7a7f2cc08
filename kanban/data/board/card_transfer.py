"""Copy or move a card to another Board the person can write: the card with its comments
(their authors and dates), its checklist and its attachments (files copied under new ids),
put at the end of a column there.

Access is decided on both boards through the one access decision: reading the card on the
source (and, for a move, writing it: a guest cannot move), writing a card on the target.
Everything both boards change is one storage commit: the new card, its comments and
attachments and the target's index; for a move also the source's tombstone (how the Board
deletes a card for good), its comments' and attachments' deletion and the source's index.
The files' bytes count in the target's quota and leave the source's in that commit; the
source's files are deleted once it commits, and the copies are removed if it does not. The
commit's change events reach every open board of both projects once it is done.

The writes are the service's own, like an import's: copied comments keep their authors,
which a person's raw KV write could not do (``kanban.data.board.comments``).
"""

from __future__ import annotations

import functools
import secrets
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

from django.conf import settings
from django.core.files import File
from django.db import transaction

from kanban.access.decision import Op, access_project_data
from kanban.access.project_writes import project_writing
from kanban.data.attachments import (
    attachment_key,
    attachment_paths,
    attachment_stored_bytes,
    attachments_stored,
)
from kanban.data.board import layout
from kanban.data.board.cards import check_built_in_board
from kanban.data.board.comments import COMMENTS_PREFIX
from kanban.data.board.ranks import DIGITS, rank_for_placement
from kanban.data.kv import Provenance, write_source
from kanban.models import Membership
from kanban.projects.attachment_files import attachment_files_delete, attachments_storage
from kanban.quotas.deployment import check_write_bytes
from storage import engine
from storage.errors import Conflict, ErrorCode, KanbanError, invalid_argument
from storage.namespaces import project_kv, project_root
from storage.usage import text_bytes
from storage.writes import SetValue, Write, delete_value, set_value

#: Whole attempts (read, copy, commit) before a board that keeps changing is a conflict.
ATTEMPTS: Final = 5


@dataclass(frozen=True, slots=True)
class _Source:
    card: dict[str, Any]
    stored: engine.StoredValue
    comments: engine.StoredValue | None
    attachments: engine.StoredValue | None
    index: engine.StoredValue | None

    @property
    def items(self) -> list[dict[str, Any]]:
        return [] if self.attachments is None else attachments_stored(self.attachments.value)


def card_copy_or_move(
    *,
    user: Any,
    project_id: UUID,
    card: str,
    target_project_id: UUID,
    column: str | None = None,
    provenance: Provenance,
    move: bool,
) -> dict[str, Any]:
    """Copy ``card`` of the Board ``project_id`` to the Board ``target_project_id`` (the
    same one makes a duplicate), at the end of ``column`` (default: a column of the same
    id there, else its first). Needs read on the source, write on the target. Answers
    ``{projectId, card, column, comments, attachments, assignees}`` of the new card.

    With ``move`` the card then leaves the source in the same commit (deleted for good
    there, its attachments' bytes back to the source's quota). Needs read and write on the
    source; a move within one board is ``board_cards``' move."""
    if move and target_project_id == project_id:
        raise invalid_argument(
            "the card is on this board already: move it between columns instead",
            field="targetProject",
        )
    if not layout.is_id(card):
        raise invalid_argument("card must be a card id", field="card")
    if column is not None and not isinstance(column, str):
        raise invalid_argument("column is a column id", field="column")
    key = layout.card_key(card)
    source_access = access_project_data(
        user=user, consumer_id=project_id, alias=None, op=Op.GET, key=key
    )
    if move:
        access_project_data(user=user, consumer_id=project_id, alias=None, op=Op.SET, key=key)
    new_id = _new_id()
    target_access = access_project_data(
        user=user,
        consumer_id=target_project_id,
        alias=None,
        op=Op.SET,
        key=layout.card_key(new_id),
    )
    check_built_in_board(project_id)
    try:
        check_built_in_board(target_project_id)
    except KanbanError as error:
        raise KanbanError(
            error.code, f"the target is not a Board: {error.message}", field="targetProject"
        ) from None
    for _ in range(ATTEMPTS):
        try:
            return _attempt(
                user=user,
                project_id=project_id,
                card=card,
                target_project_id=target_project_id,
                column=column,
                new_id=new_id,
                move=move,
                source=write_source(
                    user=user, access=target_access, provenance=provenance, conversation_id=None
                )
                | {"copiedFrom": {"project": str(source_access.target_id), "card": card}},
            )
        except Conflict:
            continue
    raise KanbanError(
        ErrorCode.CONFLICT, f"the boards kept changing; gave up after {ATTEMPTS} tries"
    )


#: The two as the bridge's op table names them.
card_copy: Final = functools.partial(card_copy_or_move, move=False)
card_move: Final = functools.partial(card_copy_or_move, move=True)


def _new_id() -> str:
    return "".join(DIGITS[b % 36] for b in secrets.token_bytes(12))


def _read_source(project_id: UUID, card: str) -> _Source:
    stored, comments, attachments, index = engine.get_values(
        [
            project_kv(project_id, layout.card_key(card)),
            project_kv(project_id, COMMENTS_PREFIX + card),
            project_kv(project_id, attachment_key(card)),
            project_kv(project_id, layout.INDEX_KEY),
        ]
    )
    shown = None if stored is None else layout.normalize_card(card, stored.value)
    if stored is None or shown is None:
        raise KanbanError(ErrorCode.NOT_FOUND, f"no card {card!r} on this board")
    return _Source(shown, stored, comments, attachments, index)


def _target_column(project_id: UUID, wanted: str | None, current: str) -> tuple[str, str, Any]:
    """The column the card lands in, the rank that puts it last there, and the target's
    index as read."""
    columns_entry, index = engine.get_values(
        [project_kv(project_id, layout.COLUMNS_KEY), project_kv(project_id, layout.INDEX_KEY)]
    )
    columns = [
        c["id"]
        for c in layout.normalize_columns(None if columns_entry is None else columns_entry.value)
    ]
    if wanted is not None and wanted not in columns:
        raise invalid_argument(
            f"column must be one of the target's columns: {', '.join(columns) or 'none yet'}",
            field="column",
        )
    column = wanted or (current if current in columns or not columns else columns[0])
    ids = layout.normalize_index(None if index is None else index.value)
    ranks = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        stored = engine.get_values([project_kv(project_id, layout.card_key(i)) for i in chunk])
        for card_id, item in zip(chunk, stored, strict=True):
            shown = None if item is None else layout.normalize_card(card_id, item.value)
            if shown is None or shown["archived"]:
                continue
            # Where the Board shows it: a card of a column that is gone, in the first.
            shown_in = shown["column"] if shown["column"] in columns or not columns else columns[0]
            if shown_in == column:
                ranks.append(shown["rank"])
    ranks.sort()
    return column, rank_for_placement(ranks, len(ranks)), index


def _attempt(
    *,
    user: Any,
    project_id: UUID,
    card: str,
    target_project_id: UUID,
    column: str | None,
    new_id: str,
    move: bool,
    source: dict[str, Any],
) -> dict[str, Any]:
    read = _read_source(project_id, card)
    landed, rank, target_index = _target_column(target_project_id, column, read.card["column"])
    members = set(
        Membership.objects.filter(project_id=target_project_id).values_list(
            "user__username", flat=True
        )
    )
    assignees = [name for name in read.card["assignees"] if name in members]
    value = {
        **read.stored.value,
        "id": new_id,
        "column": landed,
        "rank": rank,
        **layout.stored_fields({"assignees": assignees}),
    }
    items = [{**item, "id": secrets.token_hex(16)} for item in read.items]
    file_bytes = sum(attachment_stored_bytes(item) for item in items)
    keep, limit = int(settings.KANBAN_HISTORY_REVISIONS), int(settings.KANBAN_MAX_VALUE_BYTES)

    def put(project: UUID, key: str, stored: Any, expected: Any) -> Write:
        return set_value(
            project_kv(project, key),
            stored,
            expected_seq=expected,
            source=source,
            max_bytes=limit,
            keep=keep,
        )

    writes: list[Write] = [put(target_project_id, layout.card_key(new_id), value, None)]
    if read.comments is not None:
        writes.append(put(target_project_id, COMMENTS_PREFIX + new_id, read.comments.value, None))
    if items:
        writes.append(put(target_project_id, attachment_key(new_id), {"attachments": items}, None))
    index = layout.normalize_index(None if target_index is None else target_index.value)
    if move or target_project_id != project_id:
        writes.append(
            put(
                target_project_id,
                layout.INDEX_KEY,
                [*index, new_id],
                None if target_index is None else target_index.seq,
            )
        )
    else:  # a duplicate on its own board: just after the card
        at = index.index(card) + 1 if card in index else len(index)
        writes.append(
            put(
                target_project_id,
                layout.INDEX_KEY,
                [*index[:at], new_id, *index[at:]],
                None if target_index is None else target_index.seq,
            )
        )
    charges = {project_root(target_project_id): file_bytes}
    gone: list[str] = []
    if move:
        writes += _leave(project_id, card, read, source, keep)
        charges[project_root(project_id)] = -sum(
            attachment_stored_bytes(item) for item in read.items
        )
        gone = [
            p for item in read.items for p in attachment_paths(project_id=project_id, item=item)
        ]
    check_write_bytes(
        user=user,
        size=file_bytes + sum(text_bytes(w.text) for w in writes if isinstance(w, SetValue)),
    )
    copied: list[str] = []
    try:
        with project_writing(project_id=project_id), project_writing(project_id=target_project_id):
            _copy_files(project_id, target_project_id, read.items, items, copied)
            engine.commit(
                writes, max_project_bytes=int(settings.KANBAN_PROJECT_BYTES), file_bytes=charges
            )
            transaction.on_commit(functools.partial(attachment_files_delete, paths=gone))
    except BaseException:
        attachment_files_delete(paths=copied)
        raise
    return {
        "projectId": str(target_project_id),
        "card": new_id,
        "column": landed,
        "moved": move,
        "comments": len(read.comments.value)
        if read.comments is not None and isinstance(read.comments.value, list)
        else 0,
        "attachments": len(items),
        "assignees": assignees,
    }


def _leave(
    project_id: UUID, card: str, read: _Source, source: dict[str, Any], keep: int
) -> list[Write]:
    """The source's side of a move: the card deleted for good as the Board deletes it (a
    tombstone under its key), its comments and attachments gone, the index without it."""
    writes: list[Write] = [
        set_value(
            project_kv(project_id, layout.card_key(card)),
            {"id": card, "deleted": True},
            expected_seq=read.stored.seq,
            source=source,
            keep=keep,
        )
    ]
    for stored in (read.comments, read.attachments):
        if stored is not None:
            writes.append(
                delete_value(stored.address, expected_seq=stored.seq, source=source, keep=keep)
            )
    if read.index is not None:
        ids = layout.normalize_index(read.index.value)
        if card in ids:
            writes.append(
                set_value(
                    read.index.address,
                    [i for i in ids if i != card],
                    expected_seq=read.index.seq,
                    source=source,
                    keep=keep,
                )
            )
    return writes


def _copy_files(
    source_project: UUID,
    target_project: UUID,
    items: list[dict[str, Any]],
    copies: list[dict[str, Any]],
    copied: list[str],
) -> None:
    """Each attachment's file (and cover) copied under its copy's name, streamed; each name
    appended to ``copied`` once written, for the caller to remove should the commit fail."""
    storage = attachments_storage()
    for item, copy in zip(items, copies, strict=True):
        for path, new_path in zip(
            attachment_paths(project_id=source_project, item=item),
            attachment_paths(project_id=target_project, item=copy),
            strict=True,
        ):
            try:
                opened = storage.open(path, "rb")
            except FileNotFoundError:
                raise KanbanError(
                    ErrorCode.NOT_FOUND, f"the file of {item['name']!r} is gone; nothing was copied"
                ) from None
            with opened:
                saved = storage.save(new_path, File(opened, name=new_path))
            copied.append(saved)
            if saved != new_path:
                raise KanbanError(ErrorCode.CONFLICT, "attachment id collision; try again")
