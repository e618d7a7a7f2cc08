"""Stored plugin files: what a path may be, how a file is typed for serving, and the
services that read, replace and version a project's files. Plugin files live in the
database so that any number of server processes can serve them without a shared disk.

Every way files arrive (a package folder, a board archive, a board template, an esbuild
build) ends in ``plugin_files_replace``; reading a package is ``kanban.projects.packages``.
"""

from __future__ import annotations

import hashlib
import mimetypes
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final
from uuid import UUID

from django.conf import settings
from django.db import transaction

from kanban.models import PluginFile, Project
from storage.errors import ErrorCode, KanbanError, invalid_argument

MAX_PLUGIN_PATH_LENGTH: Final = 512
MAX_PLUGIN_FILE_BYTES: Final[int] = getattr(settings, "KANBAN_PLUGIN_MAX_FILE_BYTES", 5 * 2**20)
MAX_PLUGIN_FILES: Final[int] = getattr(settings, "KANBAN_PLUGIN_MAX_FILES", 1000)
MAX_PLUGIN_TOTAL_BYTES: Final[int] = getattr(settings, "KANBAN_PLUGIN_MAX_TOTAL_BYTES", 50 * 2**20)

#: Web types pinned here so that serving does not depend on the host's mime.types.
_CONTENT_TYPES: Final[dict[str, str]] = {
    ".html": "text/html",
    ".htm": "text/html",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".wasm": "application/wasm",
    ".txt": "text/plain",
    ".md": "text/markdown",
}


@dataclass(frozen=True, slots=True)
class PluginSource:
    path: str
    content: bytes
    content_type: str
    sha256: str


def check_plugin_path(path: object, *, field: str = "path") -> str:
    """A plugin file path: relative, '/'-separated, no empty, '.', '..' or hidden
    (dot-first) segment, no backslash or control character."""
    if not isinstance(path, str) or not path:
        raise invalid_argument(f"{field} must be a non-empty string", field=field)
    if len(path) > MAX_PLUGIN_PATH_LENGTH:
        raise invalid_argument(
            f"{field} is longer than {MAX_PLUGIN_PATH_LENGTH} characters", field=field
        )
    if path.startswith("/"):
        raise invalid_argument(f"{field} {path!r} must be relative, not absolute", field=field)
    if "\\" in path or any(ord(char) < 0x20 or ord(char) == 0x7F for char in path):
        raise invalid_argument(
            f"{field} {path!r} must not contain backslashes or control characters", field=field
        )
    if not path.isascii() and not _is_utf8(path):
        # A file name from disk in no UTF-8 (os gives its bytes as surrogates): nothing can
        # store, serve or print it.
        raise invalid_argument(f"{field} {path!r} is not UTF-8", field=field)
    for segment in path.split("/"):
        if segment in {"", ".", ".."}:
            raise invalid_argument(
                f"{field} {path!r} must not contain empty, '.' or '..' segments", field=field
            )
        if segment.startswith("."):
            raise invalid_argument(f"{field} {path!r} names a hidden file", field=field)
    return path


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def content_type_for(path: str) -> str:
    suffix = PurePosixPath(path).suffix.lower()
    return (
        _CONTENT_TYPES.get(suffix)
        or mimetypes.guess_type(path, strict=False)[0]
        or "application/octet-stream"
    )


def plugin_file_read(*, project_id: UUID, path: str) -> PluginFile:
    """One stored plugin file. ``invalid_argument`` for a path no file could have,
    ``not_found`` when the project has no such file. Access is the caller's to check."""
    check_plugin_path(path)
    found = PluginFile.objects.filter(project_id=project_id, path=path).first()
    if found is None:
        raise KanbanError(ErrorCode.NOT_FOUND, f"no plugin file {path!r}")
    return found


def plugin_versions(*, project_ids: Iterable[UUID]) -> dict[UUID, str]:
    """A digest of each existing project's plugin: its entry and every file's path and
    content hash. It changes exactly when what a board loads changes (an identical
    re-import keeps it); projects that do not exist are left out."""
    digests = {}
    for project_id, entry in Project.objects.filter(pk__in=set(project_ids)).values_list(
        "id", "kanban_entry"
    ):
        digests[project_id] = hashlib.sha256(f"entry {entry}\n".encode())
    rows = (
        PluginFile.objects.filter(project_id__in=list(digests))
        .order_by("project_id", "path")
        .values_list("project_id", "path", "sha256")
    )
    for project_id, path, sha256 in rows:
        digests[project_id].update(f"{path}\0{sha256}\n".encode())
    return {project_id: digest.hexdigest() for project_id, digest in digests.items()}


def plugin_files_replace(*, project: Project, files: tuple[PluginSource, ...]) -> None:
    with transaction.atomic():
        PluginFile.objects.filter(project=project).delete()
        PluginFile.objects.bulk_create(
            (
                PluginFile(
                    project=project,
                    path=check_plugin_path(source.path),
                    content=source.content,
                    content_type=source.content_type,
                    sha256=source.sha256,
                    size=len(source.content),
                )
                for source in files
            ),
            # Bounded batches keep each INSERT well below a few plugin files in size.
            batch_size=8,
        )
