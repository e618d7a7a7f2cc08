"""Reading one file of a plugin package without trusting its path: opened with
``O_NOFOLLOW`` by the caller, then judged by the opened descriptor (what it is, how large),
never by the path, which may change between a look and the open."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable


class Unreadable(Exception):
    """The file was not read; ``reason`` says why, as a package problem's text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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
