"""The attachments' files as archive parts (format version 2): ``attachments/<name in the
storage>``, kind ``file``, with its size and sha256 in the manifest.

Which files travel is what the attachments' metadata in the backup's snapshot names
(``attachment_files_all``), so the archive holds the files its rows point at and no stray
one. Each file is streamed from the attachments storage into the zip and back, a block at a
time: never a whole file, let alone the set, in memory.
"""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import dataclass
from typing import IO, Any, Final

from django.core.files import File

from kanban.data.attachments import attachment_files_all
from kanban.projects.attachment_files import attachments_storage, is_attachment_path
from storage.errors import ErrorCode, KanbanError, invalid_argument

PREFIX: Final = "attachments/"
KIND: Final = "file"
_READ: Final = 1 << 20


def part_name(path: str) -> str:
    return PREFIX + path


def _copy(source: IO[bytes], out: IO[bytes] | None) -> tuple[int, str]:
    """Read ``source`` to its end (into ``out``, if any): its size and sha256."""
    digest = hashlib.sha256()
    size = 0
    while block := source.read(_READ):
        digest.update(block)
        size += len(block)
        if out is not None:
            out.write(block)
    return size, digest.hexdigest()


def files_write(zf: zipfile.ZipFile, *, using: str) -> list[dict[str, Any]]:
    """Every attachment file as a part of ``zf``; their manifest entries."""
    storage = attachments_storage()
    parts = []
    for found in attachment_files_all(using=using):
        name = part_name(found.path)
        try:
            source = storage.open(found.path, "rb")
        except FileNotFoundError:
            # Its metadata is in the snapshot: the file went with a delete committed since.
            raise KanbanError(
                ErrorCode.NOT_FOUND,
                f"attachment file {found.path} is gone (deleted while the backup ran?); "
                "nothing was written: back up again",
            ) from None
        with source, zf.open(name, "w", force_zip64=True) as out:
            size, sha256 = _copy(source, out)
        parts.append({"name": name, "kind": KIND, "size": size, "rows": 0, "sha256": sha256})
    return parts


def check_file_part(part: dict[str, Any]) -> None:
    """A file part's entry as ``files_write`` makes it: a restore writes nowhere else."""
    name, size = part.get("name"), part.get("size")
    path = name[len(PREFIX) :] if isinstance(name, str) and name.startswith(PREFIX) else None
    if not is_attachment_path(path) or type(size) is not int or size < 0:
        raise invalid_argument(f"the archive's part {name!r} is not an attachment file's name")


def check_files_absent(parts: list[dict[str, Any]]) -> None:
    """``conflict`` if the attachments storage holds a file the archive has: a restore
    never overwrites one, nor renames its own (its metadata names it)."""
    storage = attachments_storage()
    paths = [part["name"].removeprefix(PREFIX) for part in parts]
    taken = [path for path in paths if storage.exists(path)]
    if taken:
        raise KanbanError(
            ErrorCode.CONFLICT,
            f"the attachments storage holds {len(taken)} of the archive's files already "
            f"({taken[0]}, ...); restore into an empty one",
            holding=taken[:10],
        )


def files_restore(zf: zipfile.ZipFile, parts: list[dict[str, Any]], written: list[str]) -> None:
    """Write each file part into the attachments storage, each name appended to
    ``written`` once it is there (for the caller to remove should the restore fail)."""
    storage = attachments_storage()
    paths = [part["name"].removeprefix(PREFIX) for part in parts]
    for part, path in zip(parts, paths, strict=True):
        with zf.open(part["name"]) as raw:
            content = File(raw, name=path)
            content.size = part["size"]
            saved = storage.save(path, content)
        written.append(saved)
        if saved != path:  # a file of that name appeared meanwhile
            raise KanbanError(ErrorCode.CONFLICT, f"attachment file {path} appeared meanwhile")


@dataclass(frozen=True)
class FileCheck:
    name: str
    size: int
    sha256: str


def files_found(*, using: str) -> dict[str, FileCheck]:
    """Each attachment file the metadata in ``using`` names, as the storage holds it now
    (a missing one: size 0, no sha256)."""
    storage = attachments_storage()
    found = {}
    for stored in attachment_files_all(using=using):
        name = part_name(stored.path)
        try:
            with storage.open(stored.path, "rb") as source:
                size, sha256 = _copy(source, None)
        except FileNotFoundError:
            size, sha256 = 0, ""
        found[name] = FileCheck(name, size, sha256)
    return found
