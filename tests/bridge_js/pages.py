"""What the JS tests' little HTTP servers share: an answer with its headers, and no log
line per request."""

from __future__ import annotations

from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any


class QuietPages(BaseHTTPRequestHandler):
    def answer(self, body: bytes, kind: str, headers: Mapping[str, str]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass
