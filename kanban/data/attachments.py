"""Files attached to cards: uploaded by those who may write the board, read by those who may
read it, through the one access decision (``Op.SET`` / ``Op.GET`` on the card's key).

What is attached to a card is a value of the project's KV, ``attachments:<card>``, so its
changes reach open boards like any other write; the bytes go to the attachments storage
(``kanban.projects.attachment_files``). A file's bytes (and its thumbnail's) count in the
project's storage quota in the same commit as its metadata: both fit, or neither is kept.

A download goes through a signed link that names the person it was made for and lives
``KANBAN_ATTACHMENT_URL_SECONDS``; using it decides access again, so a person who left the
board gets nothing from a link made before.
"""

from __future__ import annotations

import functools
import re
import tempfile
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any, Final
from uuid import UUID

from django.conf import settings
from django.core import signing
from django.core.files import File
from django.db import transaction

from kanban.access.decision import Access, Op, access_project_data
from kanban.access.project_writes import project_writing
from kanban.data.attachment_images import picture_of
from kanban.data.kv import ATTACHMENTS_PREFIX, Provenance, write_source
from kanban.models import Project
from kanban.projects.attachment_files import (
    attachment_files_delete,
    attachment_path,
    attachments_storage,
)
from kanban.quotas.deployment import check_write_bytes
from storage import engine, kv
from storage.addresses import check_text
from storage.errors import Conflict, ErrorCode, KanbanError, invalid_argument
from storage.namespaces import dataset_prefix, project_root

KEY_PREFIX: Final = ATTACHMENTS_PREFIX
#: What the service names an attachment (the file's name in the storage follows from it).
ATTACHMENT_ID: Final = re.compile(r"[0-9a-f]{32}")
MAX_CARD_LENGTH: Final = 256
MAX_NAME_LENGTH: Final = 255
#: Files one card holds: its metadata stays one small value.
MAX_PER_CARD: Final = 100
SALT: Final = "kanban.attachments"
#: Served as what they are; every other file as bytes to save, never as a page.
SERVED_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
_ATTEMPTS: Final = 5
_CHUNK: Final = 1 << 16


@dataclass(frozen=True, slots=True)
class Download:
    """An opened attachment: its bytes (the caller closes ``file``) and how to serve them."""

    name: str
    content_type: str
    size: int
    file: File


def attachment_key(card: str) -> str:
    return KEY_PREFIX + card


def attachment_bytes_limit() -> int:
    return int(settings.KANBAN_ATTACHMENT_BYTES)


def check_card(card: object) -> str:
    return check_text(card, field="card", allow_empty=False, max_length=MAX_CARD_LENGTH)


def check_file_name(name: object) -> str:
    """The name shown and offered on download: its last path component, without control
    characters."""
    text = check_text(name, field="name", allow_empty=False, max_length=4 * MAX_NAME_LENGTH)
    text = text.replace("\\", "/").rsplit("/", 1)[-1]
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C").strip()
    if not text or text in {".", ".."}:
        raise invalid_argument("name must name a file", field="name")
    return text[:MAX_NAME_LENGTH]


def _access(user: Any, project_id: UUID, alias: str | None, card: str, op: Op) -> Access:
    return access_project_data(
        user=user, consumer_id=project_id, alias=alias, op=op, key=attachment_key(card)
    )


def _items(dataset: kv.Dataset, card: str) -> tuple[list[dict[str, Any]], str | None]:
    """The card's attachments as stored, and the revision to write them back against."""
    entry = kv.kv_get(dataset=dataset, key=attachment_key(card))
    return ([], None) if entry is None else (_kept(entry.value), entry.revision)


def _kept(value: object) -> list[dict[str, Any]]:
    items = value.get("attachments") if isinstance(value, dict) else None
    return [item for item in items if _well_formed(item)] if isinstance(items, list) else []


def _well_formed(item: object) -> bool:
    """An item as the service writes it: one written by hand (restored from an old backup,
    say) is not shown, served or counted, for its id would name a file and its size free
    quota."""
    if not isinstance(item, dict):
        return False
    sizes = (item.get("size"), item.get("thumbnailSize", 0))
    return (
        isinstance(item.get("id"), str)
        and ATTACHMENT_ID.fullmatch(item["id"]) is not None
        and all(type(size) is int and size >= 0 for size in sizes)
        and isinstance(item.get("name"), str)
        and isinstance(item.get("contentType"), str)
    )


def _public(card: str, item: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": item["id"],
        "card": card,
        "name": item["name"],
        "contentType": item["contentType"],
        "size": item["size"],
        "image": item.get("image"),
        "uploadedBy": item["uploadedBy"],
        "uploadedAt": item["uploadedAt"],
    }


def _stored_bytes(item: dict[str, Any]) -> int:
    return int(item["size"]) + int(item.get("thumbnailSize") or 0)


def _paths(project_id: UUID, item: dict[str, Any]) -> list[str]:
    paths = [attachment_path(project_id=project_id, attachment_id=item["id"])]
    if item.get("image"):
        paths.append(
            attachment_path(project_id=project_id, attachment_id=item["id"], thumbnail=True)
        )
    return paths


def _spool(stream: IO[bytes]) -> tuple[IO[bytes], int]:
    """The upload copied aside (on disk past a few MiB), refused past the size limit."""
    limit = attachment_bytes_limit()
    spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=4 * 2**20)  # noqa: SIM115
    size = 0
    while chunk := stream.read(_CHUNK):
        size += len(chunk)
        if size > limit:
            spool.close()
            raise KanbanError(
                ErrorCode.TOO_LARGE,
                f"a file may have at most {limit} bytes (KANBAN_ATTACHMENT_BYTES)",
                limit=limit,
            )
        spool.write(chunk)
    spool.seek(0)
    return spool, size


def _write(
    access: Access,
    card: str,
    source: dict[str, Any],
    change: Callable[[list[dict[str, Any]]], tuple[list[dict[str, Any]], int]],
) -> None:
    """Write the card's attachments as ``change`` makes them from the current ones, with
    the file bytes it adds (negative: frees), compare-and-set against the revision read."""
    dataset = kv.Dataset(access.target_id, "kv", None)
    key = attachment_key(card)
    for _ in range(_ATTEMPTS):
        with project_writing(project_id=access.target_id):
            items, revision = _items(dataset, card)
            kept, file_bytes = change(items)
            try:
                if kept:
                    kv.kv_set(
                        dataset=dataset,
                        key=key,
                        value={"attachments": kept},
                        source=source,
                        expected_revision=revision,
                        file_bytes=file_bytes,
                    )
                elif revision is not None:
                    kv.kv_delete(
                        dataset=dataset,
                        key=key,
                        source=source,
                        expected_revision=revision,
                        file_bytes=file_bytes,
                    )
                return
            except Conflict:
                continue
    raise KanbanError(
        ErrorCode.CONFLICT, f"gave up after {_ATTEMPTS} conflicting writes of {key!r}"
    )


def attachment_upload(
    *,
    user: Any,
    project_id: UUID,
    card: str,
    name: str,
    content_type: str,
    stream: IO[bytes],
    alias: str | None = None,
    provenance: Provenance | None = None,
) -> dict[str, Any]:
    """Attach the file ``stream`` holds to ``card``: its metadata as ``attachment_list``
    shows it. An image (PNG, JPEG, WebP, GIF, as Pillow reads it, whatever ``content_type``
    claims) gets a cover thumbnail; anything else is served as bytes to save.

    Raises ``KanbanError``: the access decision's, ``invalid_argument``, ``too_large`` (the
    file, or an image's pixels), ``quota_exceeded``; nothing is kept then.
    """
    card = check_card(card)
    name = check_file_name(name)
    check_text(content_type, field="contentType", allow_empty=True, max_length=255)
    access = _access(user, project_id, alias, card, Op.SET)
    spool, size = _spool(stream)
    with spool:
        # A file is written bytes like a value: it draws from its writer's rate, before
        # anything is stored.
        check_write_bytes(user=user, size=size)
        picture = picture_of(spool)
        item: dict[str, Any] = {
            "id": uuid.uuid4().hex,
            "name": name,
            "contentType": "application/octet-stream" if picture is None else picture.content_type,
            "declaredType": content_type,
            "size": size,
            "image": None
            if picture is None
            else {"width": picture.width, "height": picture.height},
            "thumbnailSize": 0 if picture is None else len(picture.thumbnail),
            "uploadedBy": user.get_username(),
            "uploadedAt": datetime.now(UTC).isoformat(),
        }
        paths = _paths(access.target_id, item)
        storage = attachments_storage()
        try:
            saved = [storage.save(paths[0], File(spool, name=paths[0]))]
            if picture is not None:
                thumbnail = tempfile.SpooledTemporaryFile()  # noqa: SIM115
                with thumbnail:
                    thumbnail.write(picture.thumbnail)
                    thumbnail.seek(0)
                    saved.append(storage.save(paths[1], File(thumbnail, name=paths[1])))
            if saved != paths:  # a name taken already: never served under another's
                raise KanbanError(ErrorCode.CONFLICT, "attachment id collision; upload again")
            source = write_source(
                user=user,
                access=access,
                provenance=provenance or Provenance(via="api"),
                conversation_id=None,
            )

            def added(items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
                if len(items) >= MAX_PER_CARD:
                    raise KanbanError(
                        ErrorCode.TOO_LARGE,
                        f"a card holds at most {MAX_PER_CARD} attachments",
                        limit=MAX_PER_CARD,
                    )
                return [*items, item], _stored_bytes(item)

            _write(access, card, source, added)
        except BaseException:
            attachment_files_delete(paths=paths)
            raise
    return _public(card, item)


def attachment_list(
    *, user: Any, project_id: UUID, card: str, alias: str | None = None
) -> list[dict[str, Any]]:
    """The card's attachments, oldest first, each with its download link and its cover's
    (``thumbnailUrl``, None but for images) made for ``user``."""
    card = check_card(card)
    access = _access(user, project_id, alias, card, Op.GET)
    items, _ = _items(kv.Dataset(access.target_id, "kv", None), card)
    shown = []
    for item in items:
        urls = {
            "url": _signed_url(user, project_id, alias, card, item["id"], thumbnail=False),
            "thumbnailUrl": _signed_url(user, project_id, alias, card, item["id"], thumbnail=True)
            if item.get("image")
            else None,
        }
        shown.append({**_public(card, item), **urls})
    return shown


def attachment_delete(
    *,
    user: Any,
    project_id: UUID,
    card: str,
    attachment_id: str,
    alias: str | None = None,
    provenance: Provenance | None = None,
) -> None:
    """Remove one attachment: its bytes leave the project's quota with its metadata, and
    its files are deleted once that commits. ``not_found`` when the card has no such one."""
    card = check_card(card)
    access = _access(user, project_id, alias, card, Op.SET)
    source = write_source(
        user=user,
        access=access,
        provenance=provenance or Provenance(via="api"),
        conversation_id=None,
    )
    removed: list[dict[str, Any]] = []

    def without(items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        gone = [item for item in items if item.get("id") == attachment_id]
        if not gone:
            raise KanbanError(ErrorCode.NOT_FOUND, "no such attachment on this card")
        removed[:] = gone
        return [item for item in items if item.get("id") != attachment_id], -sum(
            _stored_bytes(item) for item in gone
        )

    with transaction.atomic():
        _write(access, card, source, without)
        paths = [path for item in removed for path in _paths(access.target_id, item)]
        transaction.on_commit(lambda: attachment_files_delete(paths=paths))


def attachments_drop_with_card(*, dataset: kv.Dataset, card: str, source: dict[str, Any]) -> None:
    """Inside the transaction deleting ``card:<card>`` (``kanban.data.kv``, the one way a
    card is deleted): its attachments' value goes in the same transaction, their bytes back
    to the quota; their files once it commits (a delete rolled back keeps them)."""
    key = attachment_key(card)
    for _ in range(_ATTEMPTS):
        entry = kv.kv_get(dataset=dataset, key=key)
        if entry is None:
            return
        items = _kept(entry.value)
        try:
            kv.kv_delete(
                dataset=dataset,
                key=key,
                source=source,
                expected_revision=entry.revision,
                file_bytes=-sum(_stored_bytes(item) for item in items),
            )
        except Conflict:
            continue
        paths = [path for item in items for path in _paths(dataset.project_id, item)]
        transaction.on_commit(functools.partial(attachment_files_delete, paths=paths))
        return
    raise KanbanError(
        ErrorCode.CONFLICT, f"gave up after {_ATTEMPTS} conflicting writes of {key!r}"
    )


def attachment_url(
    *,
    user: Any,
    project_id: UUID,
    card: str,
    attachment_id: str,
    alias: str | None = None,
    thumbnail: bool = False,
) -> str:
    """A link to download the attachment (or its thumbnail) that only ``user`` may use, for
    ``KANBAN_ATTACHMENT_URL_SECONDS``."""
    card = check_card(card)
    access = _access(user, project_id, alias, card, Op.GET)
    item = _find(access, card, attachment_id)
    if thumbnail and not item.get("image"):
        raise KanbanError(ErrorCode.NOT_FOUND, "this attachment has no thumbnail")
    return _signed_url(user, project_id, alias, card, attachment_id, thumbnail=thumbnail)


def _signed_url(
    user: Any,
    project_id: UUID,
    alias: str | None,
    card: str,
    attachment_id: str,
    *,
    thumbnail: bool,
) -> str:
    claims = {
        "p": str(project_id),
        "a": alias,
        "c": card,
        "i": attachment_id,
        "u": user.pk,
        "t": thumbnail,
    }
    return f"/attachments/{signing.dumps(claims, salt=SALT, compress=True)}/"


def attachment_open(*, user: Any, token: str) -> Download:
    """What a link from ``attachment_url`` serves, if ``user`` is the one it was made for,
    it has not expired, and the access decision allows them to read the card now."""
    if user is None or not user.is_authenticated:
        raise KanbanError(ErrorCode.UNAUTHENTICATED, "sign in to download attachments")
    try:
        claims = signing.loads(
            token, salt=SALT, max_age=int(settings.KANBAN_ATTACHMENT_URL_SECONDS)
        )
    except signing.SignatureExpired:
        raise KanbanError(
            ErrorCode.FORBIDDEN, "this download link has expired: open the attachment again"
        ) from None
    except signing.BadSignature:
        raise KanbanError(ErrorCode.NOT_FOUND, "no such attachment") from None
    if not isinstance(claims, dict) or claims.get("u") != user.pk:
        raise KanbanError(ErrorCode.NOT_FOUND, "no such attachment")
    card = check_card(claims["c"])
    access = _access(user, UUID(claims["p"]), claims["a"], card, Op.GET)
    item = _find(access, card, str(claims["i"]))
    thumbnail = bool(claims.get("t"))
    path = attachment_path(
        project_id=access.target_id, attachment_id=item["id"], thumbnail=thumbnail
    )
    try:
        file = attachments_storage().open(path, "rb")
    except FileNotFoundError:
        raise KanbanError(ErrorCode.NOT_FOUND, "this attachment's file is gone") from None
    content_type = "image/png" if thumbnail else str(item["contentType"])
    if content_type not in SERVED_TYPES:
        content_type = "application/octet-stream"
    size = int(item["thumbnailSize"] if thumbnail else item["size"])
    return Download(str(item["name"]), content_type, size, file)


def _find(access: Access, card: str, attachment_id: str) -> dict[str, Any]:
    items, _ = _items(kv.Dataset(access.target_id, "kv", None), card)
    for item in items:
        if item.get("id") == attachment_id:
            return item
    raise KanbanError(ErrorCode.NOT_FOUND, "no such attachment on this card")


@dataclass(frozen=True, slots=True)
class StoredFile:
    """A file the attachments' metadata names: its name in the attachments storage and the
    bytes the metadata says (and the project's quota counts)."""

    project_id: UUID
    path: str
    size: int


def _project_items(project_id: UUID, using: str) -> Iterator[dict[str, Any]]:
    prefix = dataset_prefix(project_id, "kv", KEY_PREFIX)
    after: str | None = None
    while page := engine.scan_values(prefix, start_after=after, limit=1000, using=using):
        for stored in page:
            yield from _kept(stored.value)
        after = page[-1].address.key


def attachment_files_all(*, using: str = "default") -> Iterator[StoredFile]:
    """Every file of every project's attachments (each one's and its cover's), as the
    metadata in ``using`` names them: what a backup carries. Files no metadata names (an
    upload not committed, a delete whose cleanup failed) are not the team's data."""
    projects = list(Project.objects.using(using).order_by("id").values_list("id", flat=True))
    for project_id in projects:
        for item in _project_items(project_id, using):
            path, *cover = _paths(project_id, item)
            yield StoredFile(project_id, path, int(item["size"]))
            if cover:
                yield StoredFile(project_id, cover[0], int(item.get("thumbnailSize") or 0))


def attachment_bytes_restore(*, using: str = "default") -> dict[UUID, int]:
    """After a load whose recount counted only stored values: count each project's files
    in its usage again, as its attachments' metadata says (what their deletes will free,
    so the count never goes below what is there). The bytes added, by project."""
    added: dict[UUID, int] = {}
    for found in attachment_files_all(using=using):
        added[found.project_id] = added.get(found.project_id, 0) + found.size
    for project_id, size in added.items():
        engine.add_file_bytes(project_root(project_id), size, using=using)
    return added


# --- for the board archive (kanban.imports.board_archive_files) ---------------------------


def attachments_stored(value: object) -> list[dict[str, Any]]:
    """The items of an ``attachments:<card>`` value as the service writes them (any other
    is never served nor counted, so never carried either)."""
    return _kept(value)


def attachment_stored_bytes(item: dict[str, Any]) -> int:
    """What an item counts in its project's quota: its file's bytes and its cover's."""
    return _stored_bytes(item)


def attachment_paths(*, project_id: UUID, item: dict[str, Any]) -> list[str]:
    """The item's file in the attachments storage, then its cover's (images only)."""
    return _paths(project_id, item)


def attachment_items(*, project_id: UUID) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every attachment of the project, as ``(card, item)``."""
    prefix = dataset_prefix(project_id, "kv", KEY_PREFIX)
    after: str | None = None
    while page := engine.scan_values(prefix, start_after=after, limit=1000):
        for stored in page:
            card = stored.address.key.removeprefix(KEY_PREFIX)
            yield from ((card, item) for item in _kept(stored.value))
        after = page[-1].address.key
