"""The board archive's file: a zip holding ``manifest.json`` (format, version, and each
part's size and sha256), ``board.json`` (the board itself, docs/board-archive.md) and one
``files/<path>`` part per plugin file.

Parts have kinds, so a later version adds its own (attachments) and this version refuses a
part it does not know rather than dropping it. Everything is checked before the importer
sees it: a damaged or foreign archive is refused whole.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from typing import Any, Final

from kanban.projects.packages import check_plugin_path
from storage import jsoncodec
from storage.errors import KanbanError, invalid_argument

FORMAT: Final = "kanban-board-archive"
VERSION: Final = 1
MANIFEST: Final = "manifest.json"
BOARD: Final = "board.json"
FILES: Final = "files/"
#: The part kinds version 1 has.
KINDS: Final = frozenset({"board", "file"})
#: The two datasets a board archive carries: the project's KV and its PersistentValue
#: (which holds its knowledge documents). Conversation-scoped values are an agent's working
#: memory of one conversation, not the board's: they stay behind.
DOMAINS: Final = ("kv", "persistentValue")
#: The most parts an archive may hold (plugin files are few; this bounds a zip bomb's
#: directory before anything is read).
MAX_PARTS: Final = 2000


@dataclass(frozen=True)
class Archive:
    board: dict[str, Any]
    files: dict[str, bytes]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def archive_pack(*, board: dict[str, Any], files: dict[str, bytes]) -> bytes:
    """The archive's bytes: board.json, the files, and the manifest naming them all."""
    text = json.dumps(board, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    parts: list[tuple[str, str, bytes]] = [(BOARD, "board", text.encode("utf-8"))]
    parts += [(FILES + path, "file", content) for path, content in sorted(files.items())]
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "parts": [
            {"name": name, "kind": kind, "bytes": len(data), "sha256": _digest(data)}
            for name, kind, data in parts
        ],
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        zf.writestr(MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        for name, _, data in parts:
            zf.writestr(name, data)
    return out.getvalue()


def archive_read(data: bytes, *, max_bytes: int) -> Archive:
    """The archive in ``data``, every part checked against the manifest; ``max_bytes``
    bounds what its parts may unpack to in all."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError):
        raise invalid_argument("this is not a board archive (not a zip file)") from None
    with zf:
        manifest = _manifest(zf)
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
    return Archive(board=board, files=files)


def _manifest(zf: zipfile.ZipFile) -> dict[str, Any]:
    try:
        manifest = json.loads(zf.read(MANIFEST))
    except (KeyError, ValueError, zipfile.BadZipFile):
        raise invalid_argument("the archive has no readable manifest.json") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise invalid_argument("manifest.json is not a board archive's")
    if manifest.get("version") != VERSION:
        raise invalid_argument(
            f"board archive version {manifest.get('version')!r}; this server imports "
            f"version {VERSION}",
            field="version",
        )
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
        if part.get("kind") not in KINDS:
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
