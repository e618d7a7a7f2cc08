"""Where the bytes of a project's card attachments live: one folder per project in the
storage ``STORAGES["attachments"]`` names (``KANBAN_ATTACHMENTS_STORAGE``: files under
``var/attachments``, or an S3-compatible store). What is attached where, and who may see
it, is ``kanban.data.attachments``'s; this module only names, keeps and erases files, so
that a project's deletion (``kanban.projects.lifecycle``) takes its files with it.
"""

from __future__ import annotations

import logging
import re
from typing import Final
from uuid import UUID

from django.core.files.storage import Storage, storages

logger = logging.getLogger(__name__)

#: Every name ``attachment_path`` makes, and nothing else (no folder of its own, no "..").
_PATH: Final = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/[0-9a-f]{32}(\.thumb\.png)?"
)


def attachments_storage() -> Storage:
    return storages["attachments"]


def attachment_path(*, project_id: UUID, attachment_id: str, thumbnail: bool = False) -> str:
    """A file's name in the storage: never anything its uploader chose."""
    return f"{project_id}/{attachment_id}{'.thumb.png' if thumbnail else ''}"


def is_attachment_path(path: object) -> bool:
    """Whether ``path`` is a name ``attachment_path`` makes (a restore writes no other)."""
    return isinstance(path, str) and _PATH.fullmatch(path) is not None


def attachment_files_delete(*, paths: list[str]) -> None:
    """Delete files whose metadata is gone. A failure is logged, not raised: the metadata
    (and the quota it counted) is already released, and a stray file is only disk."""
    storage = attachments_storage()
    for path in paths:
        try:
            storage.delete(path)
        except OSError:
            logger.warning("could not delete attachment file %s", path, exc_info=True)


def attachment_files_erase(*, project_id: UUID) -> None:
    """Delete every file of a project (its deletion, once committed)."""
    storage = attachments_storage()
    folder = str(project_id)
    try:
        _, files = storage.listdir(folder)
    except FileNotFoundError:
        return  # nothing was ever attached
    except OSError:
        logger.warning("could not list attachment files of %s", project_id, exc_info=True)
        return
    attachment_files_delete(paths=[f"{folder}/{name}" for name in files])
    try:
        storage.delete(folder)  # the filesystem's empty folder; nothing to do on S3
    except OSError:
        logger.warning("could not delete attachment folder %s", folder, exc_info=True)
