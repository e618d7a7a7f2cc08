"""Reading and writing the files of a plugin package without trusting a path: every folder
is opened below its parent's descriptor with ``O_NOFOLLOW``, and a file is judged by the
opened descriptor (what it is, how large), never by the path, which may change between a
look and the open. A link on any part of a path is refused, so nothing outside the package
is read or written whatever its folders are swapped for."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Sequence
from typing import Final

#: A folder below the package, opened by its parent's descriptor and never through a link.
DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
#: A file, likewise; non-blocking, so that a FIFO in its place cannot hang the open.
FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK


class Unreadable(Exception):
    """The file was not read; ``reason`` says why, as a package problem's text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Unreachable(Exception):
    """A folder on the way was not opened: ``where`` is the path up to the part that is
    ``what`` ("is a link", "is missing" or "is not a folder")."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where} {what}")
        self.where = where
        self.what = what


def open_folder(root: int, parts: Sequence[str], *, create: bool = False) -> int:
    """A new descriptor of the folder ``parts`` below ``root``, reached one part at a time
    without following a link (a link to ../../outside would lead out of the package); with
    ``create``, missing folders are made. Raises ``Unreachable`` naming the first part that
    is a link, missing or not a folder."""
    current = os.dup(root)
    for depth, part in enumerate(parts):
        try:
            if create:
                _make_folder(current, part)
            below = os.open(part, DIR_FLAGS, dir_fd=current)
        except OSError as error:
            os.close(current)
            what = "is a link" if is_link(root, parts[: depth + 1]) else "is missing"
            if error.errno == errno.ENOTDIR and what == "is missing":
                what = "is not a folder"
            raise Unreachable("/".join(parts[: depth + 1]), what) from None
        os.close(current)
        current = below
    return current


def _make_folder(parent: int, name: str) -> None:
    # There already: a folder, or something (a link) the open then refuses.
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, dir_fd=parent)


def is_link(root: int, parts: Sequence[str]) -> bool:
    try:
        return stat.S_ISLNK(os.lstat("/".join(parts), dir_fd=root).st_mode)
    except OSError:
        return False


def read_regular_file(
    open_file: Callable[[], int],
    *,
    limit: int,
    missing: str,
    unopened: Callable[[], str],
    irregular: str,
) -> bytes:
    """The bytes of the file ``open_file`` opens, at most ``limit`` of them. Raises
    ``Unreadable`` with ``missing`` when it is gone, ``unopened()`` when it cannot be opened
    (a link, refused by ``O_NOFOLLOW``, among others), ``irregular`` when it is not a regular
    file, and when it is larger than ``limit``."""
    try:
        descriptor = open_file()
    except FileNotFoundError:
        raise Unreadable(missing) from None
    except OSError:
        raise Unreadable(unopened()) from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise Unreadable(irregular)
    with os.fdopen(descriptor, "rb") as file:
        content = file.read(limit + 1)
    if len(content) > limit:
        raise Unreadable(f"is larger than {limit} bytes")
    return content


def write_regular_file(folder: int, name: str, content: bytes) -> bool:
    """Make ``name`` in the folder ``folder`` a regular file holding ``content``, unless it
    already does (True when it was written). The content goes to a hidden temporary file
    beside it, renamed over it: a reader never sees half of it, and a link in its place is
    replaced, never written through. Raises ``Unreadable`` when ``name`` is a link or no
    regular file."""
    try:
        found = os.lstat(name, dir_fd=folder)
    except FileNotFoundError:
        found = None
    if found is not None and stat.S_ISLNK(found.st_mode):
        raise Unreadable("is a link")
    if found is not None and not stat.S_ISREG(found.st_mode):
        raise Unreadable("is not a regular file")
    if found is not None and found.st_size == len(content):
        try:
            before = read_regular_file(
                lambda: os.open(name, FILE_FLAGS, dir_fd=folder),
                limit=len(content),
                missing="gone",
                unopened=lambda: "unopened",
                irregular="irregular",
            )
        except Unreadable:
            before = None
        if before == content:
            return False
    temporary = f".{name}.{secrets.token_hex(8)}.tmp"
    descriptor = os.open(
        temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666, dir_fd=folder
    )
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(content)
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise
    return True
