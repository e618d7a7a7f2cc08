"""``python -m kanban.daphne [daphne's options] kanban.asgi:application``: daphne with its
websocket message limit derived from the product's limits.

Daphne's own default (1 MiB) closed the socket (1006) on a value at exactly its 1 MiB limit,
before the consumer could answer; and its 5 s connect timeout answered a slow accept with
403. Every way this project starts a worker (``serve``, the
Dockerfile, the tests' and the bench's workers) goes through here, so the limit is set once.
It is twice the largest frame the consumer accepts, so a frame somewhat past that gets the
consumer's ``too_large`` and only a far larger one is cut by daphne.
"""

from __future__ import annotations

import os
import sys

from daphne.cli import CommandLineInterface

#: Daphne answers a handshake the application has not accepted within its connect timeout
#: (5 s by default) with 403, the very answer of a refusal: a board whose host then
#: believes it lost access. Under load an accept is slow, not refused; it gets a minute.
CONNECT_TIMEOUT_SECONDS = 60


def websocket_arguments() -> list[str]:
    from kanban.data.request_size import max_request_bytes

    size = str(2 * max_request_bytes())
    return [
        *("--websocket-max-message-size", size, "--websocket-max-frame-size", size),
        *("--websocket_connect_timeout", str(CONNECT_TIMEOUT_SECONDS)),
    ]


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kanban.settings")
    # Options given later win, so a caller can still override these.
    CommandLineInterface().run([*websocket_arguments(), *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
