"""The attachments of a board archive (version 2): out, each attachment's file and cover as
a part of its own; in, checked against their metadata (the archive's ``attachments:<card>``
values), written to the attachments storage under new ids and counted in the board's quota
in the import's commit.

New ids, because a file's name in the storage is its id: an import into the board an
earlier one made (or a copy on the same deployment) never writes over a file a committed
value names. What the import replaces is freed the same way a delete frees it: its bytes in
the commit, its files once the commit is done.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any, Final
from uuid import UUID

from django.core.files.base import ContentFile

from kanban.data.attachments import (
    KEY_PREFIX,
    attachment_bytes_limit,
    attachment_items,
    attachment_paths,
    attachment_stored_bytes,
    attachments_stored,
)
from kanban.projects.attachment_files import attachment_files_delete, attachments_storage
from storage.errors import ErrorCode, KanbanError, invalid_argument

COVER: Final = ".thumb.png"


def _part_names(item: dict[str, Any]) -> list[str]:
    names = [item["id"]]
    if item.get("image"):
        names.append(item["id"] + COVER)
    return names


def attachment_parts(
    *, project_id: UUID
) -> tuple[list[dict[str, Any]], list[tuple[str, Callable[[], IO[bytes]]]]]:
    """The board's attachments as board.json lists them, and each of their parts (the name
    after ``attachments/`` and how to open its bytes)."""
    storage = attachments_storage()
    listed: list[dict[str, Any]] = []
    parts: list[tuple[str, Callable[[], IO[bytes]]]] = []
    for card, item in attachment_items(project_id=project_id):
        names = _part_names(item)
        listed.append(
            {
                "card": card,
                "id": item["id"],
                "name": item["name"],
                "part": "attachments/" + names[0],
                "cover": "attachments/" + names[1] if len(names) > 1 else None,
            }
        )
        for name, path in zip(
            names, attachment_paths(project_id=project_id, item=item), strict=True
        ):
            parts.append((name, _opener(storage, path)))
    return listed, parts


def _opener(storage: Any, path: str) -> Callable[[], IO[bytes]]:
    def opened() -> IO[bytes]:
        try:
            return storage.open(path, "rb")
        except FileNotFoundError:
            raise KanbanError(
                ErrorCode.NOT_FOUND,
                f"attachment file {path} is gone (deleted while the export ran?); export again",
            ) from None

    return opened


@dataclass
class Incoming:
    """What an import does to the board's attachments."""

    #: ``attachments:<card>`` -> the value to write (the items under their new ids).
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: (path in the storage, bytes) to write before the commit.
    files: list[tuple[str, bytes]] = field(default_factory=list)
    #: The file bytes the import adds (its files) and frees (those it replaces).
    added: int = 0
    freed: int = 0
    #: Files of the values it replaces, deleted once the import commits.
    replaced: list[str] = field(default_factory=list)
    count: int = 0

    @property
    def file_bytes(self) -> int:
        return self.added - self.freed


def attachments_incoming(
    *,
    project_id: UUID,
    values: dict[str, Any],
    parts: dict[str, bytes],
    current: dict[str, Any],
) -> Incoming:
    """The archive's attachments (its ``attachments:<card>`` values, checked against its
    parts) as the import writes them into ``project_id``; ``current`` holds the values the
    board has now under those keys (None when absent). Refuses an item without its parts,
    a part of the wrong size, a part no item names, a file past the attachment limit."""
    incoming = Incoming()
    named: set[str] = set()
    limit = attachment_bytes_limit()
    for key, value in values.items():
        items = attachments_stored(value)
        if isinstance(value, dict) and len(items) != len(value.get("attachments") or []):
            raise invalid_argument(f"board.json: {key} holds an attachment of another shape")
        renamed = []
        for item in items:
            names = _part_names(item)
            sizes = [item["size"], item.get("thumbnailSize") or 0][: len(names)]
            for name, size in zip(names, sizes, strict=True):
                if name not in parts or len(parts[name]) != size:
                    raise invalid_argument(
                        f"{key}: attachment {item['id']} has no part attachments/{name} of "
                        f"{size} bytes"
                    )
            if item["size"] > limit:
                raise KanbanError(
                    ErrorCode.TOO_LARGE,
                    f"{key}: {item['name']} is past KANBAN_ATTACHMENT_BYTES ({limit})",
                    limit=limit,
                )
            named.update(names)
            fresh = {**item, "id": uuid.uuid4().hex}
            paths = attachment_paths(project_id=project_id, item=fresh)
            incoming.files += [(path, parts[name]) for path, name in zip(paths, names, strict=True)]
            incoming.added += attachment_stored_bytes(fresh)
            renamed.append(fresh)
        incoming.count += len(renamed)
        incoming.values[key] = {**value, "attachments": renamed}
        stored = current.get(key)
        if stored is not None:
            for item in attachments_stored(stored.value):
                incoming.freed += attachment_stored_bytes(item)
                incoming.replaced += attachment_paths(project_id=project_id, item=item)
    stray = sorted(set(parts) - named)
    if stray:
        raise invalid_argument(f"the archive's part attachments/{stray[0]} belongs to no card")
    return incoming


def attachment_files_write(files: list[tuple[str, bytes]], written: list[str]) -> None:
    """Write each file, its path appended to ``written`` once it is there (for the caller
    to remove should the import fail)."""
    storage = attachments_storage()
    for path, content in files:
        saved = storage.save(path, ContentFile(content, name=path))
        written.append(saved)
        if saved != path:  # a name taken already: never served under another's
            raise KanbanError(ErrorCode.CONFLICT, "attachment id collision; import again")


def attachment_files_undo(written: list[str]) -> None:
    attachment_files_delete(paths=written)


def is_attachments_key(key: str) -> bool:
    return key.startswith(KEY_PREFIX)
