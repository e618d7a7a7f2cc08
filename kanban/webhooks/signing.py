"""The webhook signature: HMAC-SHA256 over ``"<timestamp>.<body>"`` with the webhook's
secret, sent as ``X-Kanban-Signature: t=<timestamp>,v1=<hex>``. The timestamp lets a
receiver refuse an old delivery replayed; the README has the receiver's check."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Final

SIGNATURE_HEADER: Final = "X-Kanban-Signature"
SECRET_PREFIX: Final = "whsec_"  # noqa: S105 - a public marker, not a secret


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(*, secret: str, timestamp: int, body: bytes) -> str:
    signed = str(timestamp).encode("ascii") + b"." + body
    return hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()


def signature_header(*, secret: str, timestamp: int, body: bytes) -> str:
    return f"t={timestamp},v1={signature(secret=secret, timestamp=timestamp, body=body)}"


def signature_verify(
    *, secret: str, header: str, body: bytes, now: int, tolerance: int = 300
) -> bool:
    """What a receiver checks (the README's snippet does the same): a ``v1`` that matches,
    made at most ``tolerance`` seconds from ``now``."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(parts.get("t", ""))
    except ValueError:
        return False
    if abs(now - timestamp) > tolerance:
        return False
    expected = signature(secret=secret, timestamp=timestamp, body=body)
    return hmac.compare_digest(expected, parts.get("v1", ""))
