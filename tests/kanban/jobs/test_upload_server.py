"""The upload's request is not parsed twice: daphne's requests (``kanban.daphne``) leave a
form body to Django, instead of Twisted parsing it into ``request.args`` first, which took
about 1 s of a 60 MB Trello upload (bench I1)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import daphne.http_protocol
from twisted.web.test.requesthelper import DummyChannel

from kanban.daphne import UnparsedFormWebRequest, install_seams


def test_every_worker_builds_requests_that_leave_the_form_to_django() -> None:
    install_seams()
    assert daphne.http_protocol.WebRequest is UnparsedFormWebRequest
    channel: Any = DummyChannel()
    # Daphne's request tells its server it connected: a server that only listens.
    channel.factory = SimpleNamespace(server=SimpleNamespace(protocol_connected=lambda _: None))
    request = UnparsedFormWebRequest(channel)
    # Twisted's own switch (``parsePOSTFormSubmission``), read where it parses the body.
    assert request._parsePOSTFormSubmission is False
