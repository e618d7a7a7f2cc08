"""The product's size limits, read from the one protocol spec (``bridge_js/protocol.json``)
that the JS SDK and host relay are built from, and every byte cap derived from them.

A limit protects what is stored: a value is at most ``valueBytes`` of compact UTF-8 JSON, a
document's markdown at most ``documentBytes`` of UTF-8. A transport must accept anything at
the limit however its client encoded it, so each cap in front (a request body, a websocket
frame, the proxy's body size) is the limit times its worst-case JSON expansion plus an
envelope, computed here and nowhere else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

SPEC_PATH: Final = Path(__file__).resolve().parent.parent / "bridge_js" / "protocol.json"
SPEC: Final[dict[str, Any]] = json.loads(SPEC_PATH.read_text(encoding="utf-8"))
_LIMITS: Final[dict[str, int]] = SPEC["limits"]

MAX_KEY_CHARS: Final[int] = _LIMITS["keyChars"]
DEFAULT_VALUE_BYTES: Final[int] = _LIMITS["valueBytes"]
DEFAULT_DOCUMENT_BYTES: Final[int] = _LIMITS["documentBytes"]
MAX_TITLE_CHARS: Final[int] = _LIMITS["titleChars"]
MAX_DEPTH: Final[int] = _LIMITS["depth"]
MAX_REVISION_CHARS: Final[int] = _LIMITS["revisionChars"]
#: The largest seq a column holds (a bigint on PostgreSQL, an INTEGER on SQLite): a revision
#: past it is none this server issued, and SQLite cannot even bind it.
MAX_SEQ: Final[int] = 2**63 - 1
#: A batched read names at most this many keys, and returns at most this many bytes of
#: values; the values past that come back as ``too_large``, to be read one by one.
MAX_BATCH_KEYS: Final[int] = _LIMITS["batchKeys"]
MAX_BATCH_BYTES: Final[int] = _LIMITS["batchBytes"]
#: A watch's change entry carries the new value when its JSON is at most this (the
#: default of ``KANBAN_PUSH_VALUE_BYTES``).
DEFAULT_PUSH_VALUE_BYTES: Final[int] = _LIMITS["pushValueBytes"]
#: A card's attached file is at most this (the default of ``KANBAN_ATTACHMENT_BYTES``); the
#: board page tells its host the setting, which refuses a larger file before sending it.
DEFAULT_ATTACHMENT_BYTES: Final[int] = _LIMITS["attachmentBytes"]
#: Room for everything around the limited part: the frame's or body's other fields.
ENVELOPE_BYTES: Final[int] = _LIMITS["envelopeBytes"]

#: How much larger than its compact UTF-8 JSON a JSON value may arrive: a client that
#: escapes non-ASCII (Python's default) writes a 2-byte character as six (``\u00e9``).
VALUE_EXPANSION: Final = 3
#: How much larger than its UTF-8 a string may arrive as JSON: a control character is one
#: byte of UTF-8 and six of JSON (``\u0001``), whatever the encoder.
STRING_EXPANSION: Final = 6
#: Bytes of UTF-8 per character, at most.
UTF8_MAX: Final = 4


def value_json_bytes(value_bytes: int) -> int:
    """The largest JSON text (a request body, a frame) carrying one value at its limit."""
    return VALUE_EXPANSION * value_bytes + ENVELOPE_BYTES


def document_json_bytes(document_bytes: int) -> int:
    """The largest JSON text carrying one document at its limit with the longest title:
    a request, a frame, or the stored body record."""
    title_bytes = UTF8_MAX * MAX_TITLE_CHARS
    return STRING_EXPANSION * (document_bytes + title_bytes) + ENVELOPE_BYTES


def request_bytes(*, value_bytes: int, document_bytes: int) -> int:
    """The largest HTTP body or websocket frame any request may need."""
    return max(value_json_bytes(value_bytes), document_json_bytes(document_bytes))


def frame_bytes(*, value_bytes: int, document_bytes: int) -> int:
    """The websocket frame cap: the largest valid frame and one envelope more, so a frame a
    little past it still gets the consumer's ``too_large`` while a larger one is refused
    (1009) by its header, before it is read into memory."""
    return request_bytes(value_bytes=value_bytes, document_bytes=document_bytes) + ENVELOPE_BYTES
