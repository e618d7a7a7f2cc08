"""The board archive's file: a zip holding ``manifest.json`` (format, version, and each
part's size and sha256), ``board.json`` (the board itself, docs/board-archive.md), one
``files/<path>`` part per plugin file and (version 2) one ``attachments/<id>`` part per
attachment file and cover, packed as a backup packs them: streamed, with size and sha256.

Parts have kinds, so a later version adds its own and this version refuses a part it does
not know rather than dropping it. Everything is checked before the importer sees it: a
damaged or foreign archive is refused whole. Version 1 archives (no attachments) still
import.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import IO, Any, Final

from kanban.imports.zip_manifest import MANIFEST, versioned_manifest
from kanban.projects.plugin_files import check_plugin_path
from storage import jsoncodec
from storage.errors import KanbanError, invalid_argument

FORMAT: Final = "kanban-board-archive"
VERSION: Final = 2
#: What each version this server imports may hold.
KINDS: Final = {1: frozenset({"board", "file"}), 2: frozenset({"board", "file", "attachment"})}
BOARD: Final = "board.json"
FILES: Final = "files/"
ATTACHMENTS: Final = "attachments/"
#: An attachment part's name after ``attachments/``: the file's id, or its cover's.
ATTACHMENT_PART: Final = re.compile(r"[0-9a-f]{32}(\.thumb\.png)?")
_READ: Final = 1 << 20
#: The two datasets a board archive carries: the project's KV and its PersistentValue
#: (which holds its knowledge documents). Conversation-scoped values are an agent's working
#: memory of one conversation, not the board's: they stay behind.
DOMAINS: Final = ("kv", "persistentValue")
#: The most parts an archive may hold (plugin files are few; this bounds a zip bomb's
#: directory before anything is read).
MAX_PARTS: Final = 2000


@dataclass(frozen=True)
class Archive:
    version: int
    board: dict[str, Any]
    files: dict[str, bytes]
    #: Attachment parts by their name after ``attachments/``.
    attachments: dict[str, bytes] = field(default_factory=dict)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def archive_pack(
    *,
    board: dict[str, Any],
    files: dict[str, bytes],
    attachments: Iterable[tuple[str, Callable[[], IO[bytes]]]] = (),
) -> bytes:
    """The archive's bytes: board.json, the plugin files, each attachment part (its name
    after ``attachments/`` and how to open its bytes, streamed into the zip), and the
    manifest naming them all."""
    text = json.dumps(board, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    parts: list[tuple[str, str, bytes]] = [(BOARD, "board", text.encode("utf-8"))]
    parts += [(FILES + path, "file", content) for path, content in sorted(files.items())]
    entries = [
        {"name": name, "kind": kind, "bytes": len(data), "sha256": _digest(data)}
        for name, kind, data in parts
    ]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for name, _, data in parts:
            zf.writestr(name, data)
        for name, opener in attachments:
            with opener() as source, zf.open(ATTACHMENTS + name, "w", force_zip64=True) as sink:
                size, sha256 = _copy(source, sink)
            entries.append(
                {"name": ATTACHMENTS + name, "kind": "attachment", "bytes": size, "sha256": sha256}
            )
        manifest = {"format": FORMAT, "version": VERSION, "parts": entries}
        zf.writestr(MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return out.getvalue()


def _copy(source: IO[bytes], sink: IO[bytes]) -> tuple[int, str]:
    """``source`` to its end into ``sink``, a block at a time: its size and sha256."""
    digest, size = hashlib.sha256(), 0
    while block := source.read(_READ):
        digest.update(block)
        size += len(block)
        sink.write(block)
    return size, digest.hexdigest()


def archive_read(data: bytes, *, max_bytes: int) -> Archive:
    """The archive in ``data``, every part checked against the manifest; ``max_bytes``
    bounds what its parts may unpack to in all."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError):
        raise invalid_argument("this is not a board archive (not a zip file)") from None
    with zf:
        manifest = _manifest(zf)
        version = manifest["version"]
        parts = manifest["parts"]
        if sum(part["bytes"] for part in parts) > max_bytes:
            raise invalid_argument(f"the archive unpacks to more than {max_bytes} bytes")
        read = {part["name"]: _part(zf, part) for part in parts}
    boards = [part["name"] for part in parts if part["kind"] == "board"]
    if boards != [BOARD]:
        raise invalid_argument(f"the archive holds no single {BOARD}")
    try:
        board = jsoncodec.decode(read[BOARD].decode("utf-8"))
    except (UnicodeDecodeError, KanbanError):
        raise invalid_argument(f"{BOARD} is not JSON") from None
    if not isinstance(board, dict):
        raise invalid_argument(f"{BOARD} is not a JSON object")
    files = {
        check_plugin_path(part["name"][len(FILES) :], field="files"): read[part["name"]]
        for part in parts
        if part["kind"] == "file"
    }
    attachments = {}
    for part in parts:
        if part["kind"] == "attachment":
            name = part["name"].removeprefix(ATTACHMENTS)
            if not part["name"].startswith(ATTACHMENTS) or not ATTACHMENT_PART.fullmatch(name):
                raise invalid_argument(f"{part['name']} is not an attachment part's name")
            attachments[name] = read[part["name"]]
    return Archive(version=version, board=board, files=files, attachments=attachments)


def _manifest(zf: zipfile.ZipFile) -> dict[str, Any]:
    manifest = versioned_manifest(
        zf, format_name=FORMAT, noun="board archive", versions=KINDS, verb="imports"
    )
    version = manifest["version"]
    parts = manifest.get("parts")
    if not isinstance(parts, list) or not 0 < len(parts) <= MAX_PARTS:
        raise invalid_argument(f"manifest.json lists no parts, or more than {MAX_PARTS}")
    names = set()
    for part in parts:
        if not (
            isinstance(part, dict)
            and isinstance(part.get("name"), str)
            and type(part.get("bytes")) is int
            and part["bytes"] >= 0
            and isinstance(part.get("sha256"), str)
        ):
            raise invalid_argument("manifest.json: each part has a name, bytes and sha256")
        if part.get("kind") not in KINDS[version]:
            raise invalid_argument(
                f"the archive holds a part of unknown kind {part.get('kind')!r} (a newer "
                "version's?)"
            )
        if part["name"] in names:
            raise invalid_argument(f"manifest.json lists {part['name']} twice")
        names.add(part["name"])
    return manifest


def _part(zf: zipfile.ZipFile, part: dict[str, Any]) -> bytes:
    name = part["name"]
    try:
        with zf.open(name) as raw:
            # One byte past the declared size is enough to know the manifest is wrong.
            data = raw.read(part["bytes"] + 1)
    except KeyError:
        raise invalid_argument(f"the archive lacks {name}") from None
    except (zipfile.BadZipFile, OSError) as error:
        raise invalid_argument(f"{name} is damaged: {error}") from None
    if len(data) != part["bytes"] or _digest(data) != part["sha256"]:
        raise invalid_argument(
            f"{name} does not match its size and checksum in the manifest: the archive was "
            "changed or damaged"
        )
    return data
