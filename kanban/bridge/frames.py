"""The server's one validation of bridge wire frames, and their rendering.

A user can open the websocket by hand, so every frame is checked again here whatever the
host relay did: a protocol version, a request id, a known op, and only ``alias``, ``key``,
``value`` and ``expectedRevision`` as arguments. Anything else (a project id, a scope, a
target, a path) is ``invalid_argument``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from kanban.access.relationships import ALIAS_PATTERN, ALIAS_RE
from storage.errors import KanbanError, invalid_argument
from storage.limits import MAX_REVISION_CHARS, SPEC
from storage.namespaces import check_user_key, check_user_keys
from storage.writes import ANY

PROTOCOL_VERSION: Final[int] = SPEC["version"]
#: Close codes, from the spec, all the application's own (4000-4999): after 4401 and 4403
#: the host stops (the user signed out, or may no longer open the board); after 4013, "try
#: again later" (no database, or this person's sockets at their cap) it reconnects. Not the
#: standard 1013: autobahn, under daphne, refuses to send any code but 1000 and 3000-4999,
#: and the socket ended in 1011 instead (pinned in tests/kanban/quotas/test_deployment.py).
CLOSE_UNAUTHENTICATED: Final[int] = SPEC["close"]["unauthenticated"]
CLOSE_FORBIDDEN: Final[int] = SPEC["close"]["forbidden"]
CLOSE_TRY_AGAIN_LATER: Final[int] = SPEC["close"]["tryAgainLater"]
MAX_REQUEST_ID: Final = 2**53 - 1

_ENVELOPE: Final = frozenset({"v", "id", "op"})
_ARGUMENTS: Final = frozenset(SPEC["fields"]) - _ENVELOPE


@dataclass(frozen=True, slots=True)
class WireOps:
    """Each op the socket knows and the arguments it takes, from the protocol spec:
    "required", "optional", "keys" (a required list of keys, a batched read's), or for
    ``value`` the fields of the object it holds (an object op takes ``value`` optionally).

    ``ops`` lists the core ops by name; every other family (Knowledge, entrypoints,
    attachments, cards, and any added later) lists its calls by SDK method, each naming
    its op, and is read whatever its section is called. An upload (``via: host``) is the
    board host's, over HTTP: its bytes never cross the socket, which knows no such op."""

    arguments: dict[str, dict[str, Any]]
    #: Which arguments each op takes; a present argument outside its set is refused.
    allowed: dict[str, frozenset[str]]
    required: dict[str, frozenset[str]]

    @classmethod
    def of(cls, spec: dict[str, Any]) -> WireOps:
        arguments = dict(spec["ops"])
        for section in spec.values():
            if not isinstance(section, dict):
                continue
            for rule in section.values():
                if isinstance(rule, dict) and "op" in rule and rule.get("via") != "host":
                    arguments[rule["op"]] = rule
        allowed = {
            op: frozenset({"alias"}) | (frozenset(takes) & _ARGUMENTS)
            for op, takes in arguments.items()
        }
        required = {
            op: frozenset(name for name, rule in takes.items() if rule in ("required", "keys"))
            for op, takes in arguments.items()
        }
        return cls(arguments, allowed, required)


#: Read where a frame is checked, never copied out, so a test may add an op to the spec.
WIRE_OPS = WireOps.of(SPEC)


@dataclass(frozen=True, slots=True)
class Request:
    id: int
    op: str
    alias: str | None
    key: str | None
    value: Any
    expected_revision: Any  # ANY (absent), None (must be absent) or a revision string


def request_id_of(frame: Any) -> int | None:
    """The id to answer to, when the frame has a usable one (even if it is otherwise bad)."""
    if isinstance(frame, dict):
        rid = frame.get("id")
        if type(rid) is int and 0 < rid <= MAX_REQUEST_ID:
            return rid
    return None


def op_of(frame: Any) -> str:
    """The op a frame names, for counting: one of the known ops, or "invalid" (a metric's
    labels must stay few, whatever a client sends)."""
    op = frame.get("op") if isinstance(frame, dict) else None
    return op if isinstance(op, str) and op in WIRE_OPS.arguments else "invalid"


def check_frame(frame: Any) -> Request:
    """Validate one decoded frame; raise ``invalid_argument`` naming the first problem."""
    if not isinstance(frame, dict):
        raise invalid_argument("a frame must be a JSON object")
    unknown = sorted(set(frame) - _ENVELOPE - _ARGUMENTS)
    if unknown:
        raise invalid_argument(f"field {unknown[0]!r} is not allowed in a frame", field=unknown[0])
    if frame.get("v") != PROTOCOL_VERSION or type(frame.get("v")) is not int:
        raise invalid_argument(f"protocol version must be {PROTOCOL_VERSION}", field="v")
    rid = request_id_of(frame)
    if rid is None:
        raise invalid_argument("id must be a positive safe integer", field="id")
    op = frame.get("op")
    wire = WIRE_OPS
    if not isinstance(op, str) or op not in wire.arguments:
        raise invalid_argument("unknown op", field="op")
    present = _ARGUMENTS & set(frame)
    extra = sorted(present - wire.allowed[op])
    if extra:
        raise invalid_argument(f"{op} takes no {extra[0]!r}", field=extra[0])
    missing = sorted(wire.required[op] - present)
    if missing:
        raise invalid_argument(f"{op} needs {missing[0]!r}", field=missing[0])
    alias = frame.get("alias")
    if alias is not None and (not isinstance(alias, str) or not ALIAS_RE.fullmatch(alias)):
        raise invalid_argument(f"alias must match {ALIAS_PATTERN}", field="alias")
    key = frame.get("key")
    if key is not None or "key" in frame:
        key = check_user_key(key)
    takes = wire.arguments[op].get("value")
    if takes == "keys":
        check_user_keys(frame["value"])
    elif isinstance(takes, list) and frame.get("value") is not None:
        # An object of the op's own fields (a Knowledge call's arguments, a watch's prefix).
        if not isinstance(frame["value"], dict):
            raise invalid_argument(f"{op} takes an object as 'value'", field="value")
        extra = sorted(set(frame["value"]) - set(takes))
        if extra:
            raise invalid_argument(f"{op} takes no {extra[0]!r}", field=extra[0])
    expected: Any = ANY
    if "expectedRevision" in frame:
        expected = frame["expectedRevision"]
        if expected is not None and (
            not isinstance(expected, str) or not 0 < len(expected) <= MAX_REVISION_CHARS
        ):
            raise invalid_argument("expectedRevision must be a revision or null")
    return Request(rid, op, alias, key, frame.get("value"), expected)


def reply_ok(request_id: int, result: Any) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "id": request_id, "ok": True, "result": result}


def reply_error(request_id: int | None, error: KanbanError) -> dict[str, Any]:
    """The one websocket rendering of an error (the HTTP one is ``kanban.api.errors``)."""
    return {"v": PROTOCOL_VERSION, "id": request_id, "ok": False, "error": error.as_dict()}


def revision_event(alias: str | None, revision: str) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "event": "revision", "alias": alias, "revision": revision}


class Change(NamedTuple):
    """One committed change as the channel layer carries it: a KV key's carries its new
    value's JSON text when that is small enough to push (``text``), or says it was
    ``deleted``; otherwise (a large value, a document) it only names the key. ``source`` is
    the write's source as stored (JSON text), the one a reader of the key's history sees."""

    kind: str
    key: str
    revision: str
    text: str | None = None
    deleted: bool = False
    source: str | None = None


def changes_event_text(
    alias: str | None, changes: Sequence[Change], *, resync: bool = False
) -> str:
    """A watch's event, encoded: the keys that changed, each with its new revision and,
    where the change carries it, its new ``value`` or ``deleted: true`` and the write's
    ``source`` (who wrote it and through what, as the key's history keeps it); ``resync``
    after a gap (reconnect, lost events) means "re-read what you hold".

    A pushed value and a source are spliced in as the JSON text they were stored as
    (``storage`` wrote and checked it), so neither is decoded and encoded again per event."""
    entries = []
    for change in changes:
        entry = f'{{"key":{_json(change.key)},"revision":{_json(change.revision)}'
        if change.deleted:
            entry += ',"deleted":true'
        elif change.text is not None:
            entry += f',"value":{change.text}'
        if change.source is not None:
            entry += f',"source":{change.source}'
        entries.append(entry + "}")
    tail = ',"resync":true' if resync else ""
    return (
        f'{{"v":{PROTOCOL_VERSION},"event":"changes","alias":{_json(alias)},'
        f'"changes":[{",".join(entries)}]{tail}}}'
    )


def _json(value: str | None) -> str:
    return json.dumps(value, ensure_ascii=False)


def invalidated_event(alias: str | None, code: str) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "event": "invalidated", "alias": alias, "code": code}


def context_event(context: dict[str, Any]) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "event": "context", "context": context}


def reload_event() -> dict[str, Any]:
    """Host-only: the plugin's files changed; the host reloads the iframe."""
    return {"v": PROTOCOL_VERSION, "event": "reload"}


def server_frame(text: str) -> bytes:
    """``text`` as one final, unmasked websocket text frame (RFC 6455 section 5.2), as a
    server sends it: built once per event and written to every socket that hears it."""
    payload = text.encode("utf-8")
    size = len(payload)
    if size < 126:
        header = bytes((0x81, size))
    elif size < 1 << 16:
        header = bytes((0x81, 126)) + size.to_bytes(2, "big")
    else:
        header = bytes((0x81, 127)) + size.to_bytes(8, "big")
    return header + payload
