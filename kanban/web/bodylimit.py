"""Bounds every HTTP request body before Django reads it.

Django's ASGI handler spools a body of any size to disk when no Content-Length bounds it, and
DRF treats a body without Content-Length as empty. This layer refuses a declared oversize body
at once, and buffers an undeclared (chunked) one up to the limit, handing Django a real
Content-Length, so both kinds get the same exact limit and the same ``too_large`` error.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kanban.data.attachments import attachment_bytes_limit
from kanban.data.request_size import max_request_bytes
from kanban.jobs.imports import trello_import_bytes

#: The dashboard's Trello upload (kanban/web/imports.py) takes a file up to its own limit,
#: which is larger than any value's request, with room for the multipart form around it.
TRELLO_UPLOAD_PATH = "/imports/trello"
#: The dashboard's board archive upload takes the same limit.
ARCHIVE_UPLOAD_PATH = "/imports/archive"
MULTIPART_ROOM = 64 * 1024
#: The REST import of a board archive (kanban/api/board_archives.py) takes the same limit.
BOARD_ARCHIVE_PATH = "/api/v1/projects/archive"


#: A card's attachment upload (kanban/api/attachments.py) takes a file up to its own limit.
ATTACHMENT_UPLOAD_PATH = re.compile(r"/api/v1/projects/[0-9a-fA-F-]{32,36}/attachments/")


def limit_of(scope: dict[str, Any]) -> int:
    if scope.get("path") in (TRELLO_UPLOAD_PATH, ARCHIVE_UPLOAD_PATH, BOARD_ARCHIVE_PATH):
        return max(max_request_bytes(), trello_import_bytes() + MULTIPART_ROOM)
    if ATTACHMENT_UPLOAD_PATH.fullmatch(str(scope.get("path"))):
        return max(max_request_bytes(), attachment_bytes_limit() + MULTIPART_ROOM)
    return max_request_bytes()


TOO_LARGE = json.dumps(
    {"code": "too_large", "message": "request body is larger than this server accepts"}
).encode()


class RequestBodyLimit:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = limit_of(scope)
        headers = scope.get("headers") or []
        declared = [v for k, v in headers if k == b"content-length"]
        if declared:
            try:
                size = int(declared[0])
            except ValueError:
                size = limit + 1
            if size > limit:
                return await _refuse(send)
            return await self.app(scope, receive, send)
        if scope.get("method") in {"GET", "HEAD", "OPTIONS"}:
            return await self.app(scope, receive, send)
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            if len(body) > limit:
                return await _refuse(send)
            if not message.get("more_body"):
                break
        scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        delivered = False

        async def replay() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                return await receive()
            delivered = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        return await self.app(scope, replay, send)


async def _refuse(send: Any) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(TOO_LARGE)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": TOO_LARGE})
