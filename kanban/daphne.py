"""``python -m kanban.daphne [daphne's options] kanban.asgi:application``: daphne with its
websocket message limit derived from the product's limits.

Daphne's own default (1 MiB) closed the socket (1006) on a value at exactly its 1 MiB limit,
before the consumer could answer; and its 5 s connect timeout answered a slow accept with
403. Every way this project starts a worker (``serve``, the
Dockerfile, the tests' and the bench's workers) goes through here, so the limit is set once.
It is the largest frame the consumer accepts plus one envelope (``storage.limits.frame_bytes``):
a frame a little past the largest valid one gets the consumer's ``too_large``; a larger one
is closed with 1009 by autobahn as soon as its header gives its length, before any of it is
buffered, so no socket holds more than the cap (it was twice the largest frame, ~100 MiB).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import daphne.http_protocol
import daphne.server
from daphne.cli import CommandLineInterface
from daphne.http_protocol import WebRequest
from daphne.ws_protocol import WebSocketFactory

#: Daphne answers a handshake the application has not accepted within its connect timeout
#: (5 s by default) with 403, the very answer of a refusal: a board whose host then
#: believes it lost access. Under load an accept is slow, not refused; it gets a minute.
CONNECT_TIMEOUT_SECONDS = 60


def max_frame_bytes() -> int:
    """Daphne's frame and message cap, from the configured limits."""
    from django.conf import settings

    from storage import limits

    return limits.frame_bytes(
        value_bytes=int(settings.KANBAN_MAX_VALUE_BYTES),
        document_bytes=int(settings.KANBAN_MAX_DOCUMENT_BYTES),
    )


def websocket_arguments() -> list[str]:
    size = str(max_frame_bytes())
    return [
        *("--websocket-max-message-size", size, "--websocket-max-frame-size", size),
        *("--websocket_connect_timeout", str(CONNECT_TIMEOUT_SECONDS)),
    ]


class ClosingWebSocketFactory(WebSocketFactory):
    """Seam: daphne's websocket factory, whose sockets fail with a close frame rather than a
    dropped connection. Autobahn drops by default (``failByDrop``), so a frame past the cap
    reached the peer as 1006, like a network fault; with the close frame it reads 1009,
    and the socket still goes once autobahn's close handshake times out. Daphne sets its
    factory's options itself (``Server.run``), so the option is added where they are set.
    Pinned in tests/kanban/test_daphne.py."""

    def setProtocolOptions(self, *args: Any, **kwargs: Any) -> None:
        super().setProtocolOptions(*args, **{"failByDrop": False, **kwargs})


class UnparsedFormWebRequest(WebRequest):
    """Seam: daphne's request, without Twisted's parsing of a form body into
    ``request.args``, which daphne never reads (it hands the body on to Django, which parses
    it again). Twisted parses a multipart body with the email package: about 1 s of a 60 MB
    Trello upload's 1.6 s, before Django saw the request (bench I1's upload row)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "parsePOSTFormSubmission": False})


def install_seams() -> None:
    daphne.server.WebSocketFactory = ClosingWebSocketFactory
    # Daphne's HTTP factory builds its requests from this module global.
    daphne.http_protocol.WebRequest = UnparsedFormWebRequest


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kanban.settings")
    install_seams()
    # Options given later win, so a caller can still override these.
    CommandLineInterface().run([*websocket_arguments(), *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
