"""A seeded, deterministic generator of malformed bridge frames (R4).

Every frame it makes is one the bridge must refuse: the generator never produces a valid
request, so any ``ok`` reply, any write and any relayed frame is a finding. The same seed
gives the same frames.

Two sides: ``"ws"`` frames are raw websocket payloads (text, possibly not JSON, or bytes);
``"host"`` frames are JS values posted over the plugin's MessagePort. A host frame travels
as JSON text whose ``{"$fuzz": ...}`` objects the page turns into what JSON cannot say
(NaN, undefined, BigInt, Date, Map, cycles, holes, deep nesting; see ``REVIVE_JS``).
Categories only one side can express (binary frames, raw number tokens, duplicate keys;
structured-clone types) are generated for that side only.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal

Side = Literal["ws", "host"]

CATEGORIES: Final = (
    "huge_strings",
    "deep_nesting",
    "proto_keys",
    "extra_fields",
    "nan_infinity",
    "wrong_types",
    "unknown_ops",
    "non_json",
    "binary",
    "empty",
    "top_level",
    "bad_ids",
    "mutations",
)
HOST_CATEGORIES: Final = tuple(c for c in CATEGORIES if c != "binary")

#: The id every generated frame would be answered to, when it has a usable one.
MAX_ID: Final = 2**53 - 1


@dataclass(frozen=True)
class Special:
    """A value JSON cannot hold, written per side: a raw token on the websocket, a
    ``{"$fuzz": kind}`` marker the page revives for the host."""

    kind: str
    arg: Any = None


@dataclass(frozen=True)
class Fuzz:
    category: str
    #: The websocket payload (``str`` text or ``bytes``), or the host frame as marker JSON.
    payload: str | bytes
    #: The id a reply must carry: the frame's own when usable, else ``None``.
    reply_id: int | None
    #: Whether the frame as a whole exceeds the size limit (``too_large`` expected).
    oversized: bool = False


# --- rendering ----------------------------------------------------------------------------------

_WS_TOKENS: Final = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity", "overflow": "1e999"}


def render(value: Any, side: Side) -> str:
    """JSON text of ``value`` with its ``Special`` parts written for ``side``."""
    if isinstance(value, Special):
        return _render_special(value, side)
    if isinstance(value, dict):
        items = value.items() if not isinstance(value, DupKeys) else value.pairs
        return "{" + ",".join(f"{json.dumps(k)}:{render(v, side)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(render(item, side) for item in value) + "]"
    return json.dumps(value, ensure_ascii=True)


def _render_special(special: Special, side: Side) -> str:
    kind, arg = special.kind, special.arg
    if side == "ws":
        if kind in _WS_TOKENS:
            return _WS_TOKENS[kind]
        if kind == "bigint":
            return "9" * arg
        if kind == "deep":
            depth, shape = arg
            if shape == "list":
                return "[" * depth + "]" * depth
            return '{"a":' * depth + "0" + "}" * depth
        raise ValueError(f"{kind} has no websocket form")
    return json.dumps({"$fuzz": kind, "arg": arg})


class DupKeys(dict[str, Any]):
    """An object with repeated keys (websocket only: text keeps them, a JS value cannot)."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


#: The page side of ``Special``: JSON.parse the frame, then revive the markers in place.
REVIVE_JS: Final = r"""
function revive(x) {
  if (x === null || typeof x !== "object") return x;
  if (!Array.isArray(x) && typeof x.$fuzz === "string" && Object.keys(x).length === 2) {
    const arg = x.arg;
    switch (x.$fuzz) {
      case "nan": return NaN;
      case "inf": return Infinity;
      case "-inf": return -Infinity;
      case "overflow": return Infinity;
      case "undefined": return undefined;
      case "bigint": return BigInt("9".repeat(arg));
      case "date": return new Date(0);
      case "regexp": return /fuzz/g;
      case "map": return new Map([["v", 1]]);
      case "set": return new Set([1]);
      case "buffer": return new Uint8Array(arg).buffer;
      case "typed": return new Uint8Array(arg);
      case "error": return new Error("fuzz");
      case "boxed": return new String("get");
      case "sparse": { const a = [1]; a[arg] = 2; return a; }
      case "cycle": { const o = {v: 1, id: 1, op: "set", key: "k"}; o.value = o; return o; }
      case "deep": {
        let v = 0;
        for (let i = 0; i < arg[0]; i++) v = arg[1] === "list" ? [v] : {a: v};
        return v;
      }
      default: throw new Error("unknown marker " + x.$fuzz);
    }
  }
  for (const k of Object.keys(x)) {
    const v = revive(x[k]);
    if (v === undefined && !(x[k] && x[k].$fuzz === "undefined")) continue;
    x[k] = v;
  }
  return x;
}
"""


# --- building blocks --------------------------------------------------------------------------


def templates() -> list[dict[str, Any]]:
    """Valid requests, one per shape; mutations start from these."""
    return [
        {"v": 1, "id": 1, "op": "get", "key": "fuzz"},
        {"v": 1, "id": 1, "op": "set", "key": "fuzz", "value": {"n": 1}},
        {"v": 1, "id": 1, "op": "set", "key": "fuzz", "value": 1, "expectedRevision": None},
        {"v": 1, "id": 1, "op": "subscribe"},
        {"v": 1, "id": 1, "op": "unsubscribe"},
        {"v": 1, "id": 1, "op": "knowledge.list", "value": {}},
        {"v": 1, "id": 1, "op": "knowledge.get", "key": "doc"},
        {"v": 1, "id": 1, "op": "knowledge.create", "value": {"title": "t", "markdown": "m"}},
        {"v": 1, "id": 1, "op": "knowledge.edit", "key": "doc", "value": {"title": "t"}},
        {"v": 1, "id": 1, "op": "knowledge.delete", "key": "doc"},
        {"v": 1, "id": 1, "op": "knowledge.search", "value": {"query": "q"}},
        {"v": 1, "id": 1, "op": "knowledge.readLines", "key": "doc", "value": {"start": 1}},
    ]


FORBIDDEN_FIELDS: Final = [
    "projectId",
    "project_id",
    "scope",
    "target",
    "targetId",
    "path",
    "conversationId",
    "domain",
    "namespace",
    "user",
    "page",
    "V",
    "ID",
    "Op",
    "Key",
    "Value",
    "alias ",
    " key",
    "",
    "\u0000",
    "\ud83d\ude00",
]
PROTO_NAMES: Final = ["__proto__", "constructor", "prototype"]
UNKNOWN_OPS: Final = [
    "GET",
    "Set",
    "get ",
    " set",
    "set\u0000",
    "delete",
    "update",
    "list",
    "append",
    "kv.get",
    "knowledge",
    "knowledge.",
    "knowledge.update",
    "knowledge.LIST",
    "constructor",
    "__proto__",
    "toString",
    "hasOwnProperty",
    "valueOf",
    "includes",
    "",
]
#: Per field, values of the wrong type or out of range (never a valid one, on either side).
WRONG: Final[dict[str, list[Any]]] = {
    "v": [None, True, False, 0, 2, -1, "1", "v1", [], [1], {}, {"v": 1}, 1.5],
    "id": [None, True, False, 0, -1, -(2**53), 2**53, 1.5, "1", "abc", [], [1], {}, {"id": 1}],
    "op": [None, True, 1, [], {}, ["get"], {"op": "get"}],
    "alias": [True, 1, 1.5, [], ["inventory"], {}, "", "Inventory", "1abc", "a b", "a" * 65],
    "key": [None, True, 0, 1.5, [], ["k"], {}, {"key": "k"}, "", "a\u0000b", "\ud800", "\udc00x"],
    "expectedRevision": [True, 0, 1, 1.5, [], ["1"], {}, "", "r" * 65],
}
#: Knowledge ``value`` shapes the server refuses whatever the fields hold.
KNOWLEDGE_BAD_VALUES: Final = [1, "doc", True, [], [{"title": "t"}], {"projectId": "x"}]


def _valid_op_fields(frame: dict[str, Any]) -> list[str]:
    return [f for f in frame if f not in {"v", "id", "op"}]


class Generator:
    def __init__(self, seed: int, side: Side) -> None:
        self.rng = random.Random(f"{seed}:{side}")
        self.side = side
        self.next_id = 0

    # helpers

    def fresh_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def template(self, *, with_id: bool = True) -> dict[str, Any]:
        frame = dict(self.rng.choice(templates()))
        frame["id"] = self.fresh_id() if with_id else frame["id"]
        return frame

    def huge(self, low: int = 1025, high: int = 20_000) -> str:
        return self.rng.choice("xé\u4e2d") * self.rng.randint(low, high)

    def any_value(self, depth: int = 0) -> Any:
        r = self.rng.random()
        if depth > 2 or r < 0.5:
            return self.rng.choice([None, True, 0, -7, 2.5, "s", "", "é"])
        if r < 0.75:
            return [self.any_value(depth + 1) for _ in range(self.rng.randint(0, 3))]
        return {f"k{n}": self.any_value(depth + 1) for n in range(self.rng.randint(0, 3))}

    def ws_only(self) -> bool:
        return self.side == "ws"

    # categories: each returns (frame or raw text/bytes, oversized)

    def huge_strings(self) -> tuple[Any, bool]:
        frame = self.template()
        where = self.rng.choice(["key", "alias", "op", "field", "field_value", "revision", "big"])
        if where == "key":
            frame = {"v": 1, "id": frame["id"], "op": self.rng.choice(["get", "set"])}
            frame["key"] = self.huge()
            if frame["op"] == "set":
                frame["value"] = 1
        elif where == "alias":
            frame["alias"] = "a" + "b" * self.rng.randint(64, 20_000)
        elif where == "op":
            frame["op"] = "get" + self.huge(1, 20_000)
        elif where == "field":
            frame[self.huge(64, 20_000)] = 1
        elif where == "field_value":
            frame[self.rng.choice(FORBIDDEN_FIELDS[:8])] = self.huge(1, 20_000)
        elif where == "revision":
            frame = {"v": 1, "id": frame["id"], "op": "set", "key": "fuzz", "value": 1}
            frame["expectedRevision"] = self.huge(65, 20_000)
        else:
            # Over the size limit as a whole: refused before it is even decoded.
            frame = {"v": 1, "id": frame["id"], "op": "set", "key": "fuzz"}
            frame["value"] = "x" * (OVERSIZE_WS if self.ws_only() else OVERSIZE_HOST)
            return frame, True
        return frame, False

    def deep_nesting(self) -> tuple[Any, bool]:
        shape = self.rng.choice(["list", "dict"])
        depths = [65, 66, 100, 1000, 5000]
        if self.ws_only() and shape == "list":
            depths.append(100_000)  # past Python's recursion limit: refused, not a crash
        depth = self.rng.choice(depths)
        nest = Special("deep", [depth, shape])
        where = self.rng.choice(["value", "field", "frame", "key", "alias"])
        frame = self.template()
        if where == "value":
            frame = {"v": 1, "id": frame["id"], "op": "set", "key": "deep", "value": nest}
        elif where == "field":
            frame["nested"] = nest
        elif where == "frame":
            return nest, False
        else:
            frame[where] = nest
        return frame, False

    def proto_keys(self) -> tuple[Any, bool]:
        frame = self.template()
        name = self.rng.choice(PROTO_NAMES)
        where = self.rng.choice(["top", "top_object", "op", "alias", "knowledge_value"])
        if where == "top":
            frame[name] = self.rng.choice([None, 1, "x", {"v": 2}, {"polluted": True}])
        elif where == "top_object":
            frame[name] = {"isAdmin": True, "projectId": "00000000-0000-0000-0000-000000000000"}
        elif where == "op":
            frame["op"] = name
        elif where == "alias":
            frame["alias"] = "__proto__"  # "constructor" would be a well-formed alias
        else:
            op = self.rng.choice(["knowledge.create", "knowledge.edit", "knowledge.list"])
            frame = {"v": 1, "id": frame["id"], "op": op, "value": {name: {"title": "t"}}}
            if op == "knowledge.edit":
                frame["key"] = "doc"
        return frame, False

    def extra_fields(self) -> tuple[Any, bool]:
        frame = self.template()
        for _ in range(self.rng.randint(1, 3)):
            frame[self.rng.choice(FORBIDDEN_FIELDS)] = self.rng.choice(
                [None, 1, "00000000-0000-0000-0000-000000000000", "conversation", "/ws/", {}]
            )
        if self.rng.random() < 0.2:
            # A valid knowledge frame except for a field hidden inside its value.
            op, value = self.rng.choice(
                [
                    ("knowledge.create", {"title": "t", "markdown": "m"}),
                    ("knowledge.list", {}),
                    ("knowledge.search", {"query": "q"}),
                ]
            )
            value = {**value, self.rng.choice(FORBIDDEN_FIELDS[:8]): "x"}
            frame = {"v": 1, "id": frame["id"], "op": op, "value": value}
        return frame, False

    def nan_infinity(self) -> tuple[Any, bool]:
        kinds = ["nan", "inf", "-inf", "overflow"]
        special = Special(self.rng.choice(kinds))
        frame = self.template()
        where = self.rng.choice(["v", "id", "key", "alias", "value", "nested", "revision"])
        if where in {"value", "nested"}:
            value = special if where == "value" else {"a": [1, special]}
            frame = {"v": 1, "id": frame["id"], "op": "set", "key": "n", "value": value}
        elif where == "revision":
            frame = {"v": 1, "id": frame["id"], "op": "set", "key": "n", "value": 1}
            frame["expectedRevision"] = special
        else:
            frame[where] = special
        return frame, False

    def wrong_types(self) -> tuple[Any, bool]:
        frame = self.template()
        fields = ["v", "id", "op", "alias", *[f for f in ("key", "expectedRevision") if f in frame]]
        if frame["op"].startswith("knowledge.") and self.rng.random() < 0.4:
            op = frame["op"]
            frame["value"] = self.rng.choice(KNOWLEDGE_BAD_VALUES)
            if op in {"knowledge.get", "knowledge.delete"} and frame["value"] == {}:
                frame["value"] = 1
            return frame, False
        if frame["op"] in {"get", "subscribe", "unsubscribe"} and self.rng.random() < 0.2:
            frame["value"] = self.any_value()  # these ops take no value at all
            return frame, False
        field = self.rng.choice(fields)
        frame[field] = self.rng.choice(WRONG[field])
        if field == "key" and frame["op"] == "knowledge.get" and frame[field] is None:
            frame[field] = True
        return frame, False

    def unknown_ops(self) -> tuple[Any, bool]:
        frame = self.template()
        frame["op"] = self.rng.choice(UNKNOWN_OPS)
        return frame, False

    def non_json(self) -> tuple[Any, bool]:
        if self.ws_only():
            valid = json.dumps(self.template())
            return (
                self.rng.choice(
                    [
                        valid[: self.rng.randint(1, len(valid) - 1)],
                        valid.replace('"', "'"),
                        valid[:-1] + ",}",
                        "\ufeff" + valid,
                        valid + valid,
                        valid + " x",
                        "{v:1,id:1,op:get}",
                        "/* c */" + valid,
                        "undefined",
                        "True",
                        "None",
                        "0x10",
                        "{'v': 1}",
                        "\\u0000",
                        '"unterminated',
                        "[1,]",
                        '{"v":1 "id":2}',
                        "".join(chr(self.rng.randint(0, 0x2FF)) for _ in range(40)),
                    ]
                ),
                False,
            )
        kind = self.rng.choice(
            [
                "undefined",
                "bigint",
                "date",
                "regexp",
                "map",
                "set",
                "buffer",
                "typed",
                "error",
                "boxed",
                "sparse",
                "cycle",
            ]
        )
        arg = 5000 if kind == "bigint" else (8 if kind in {"buffer", "typed"} else 3)
        special = Special(kind, arg)
        frame = self.template()
        where = self.rng.choice(["frame", "value", "field"])
        if kind == "cycle" or where == "frame":
            return special, False
        if where == "value":
            return {
                "v": 1,
                "id": frame["id"],
                "op": "set",
                "key": "j",
                "value": {"x": special},
            }, False
        field = self.rng.choice(["v", "id", "op", "key", "alias"])
        frame[field] = special
        return frame, False

    def binary(self) -> tuple[Any, bool]:
        text = json.dumps(self.template()).encode()
        return self.rng.choice([text, b"", b"\x00\xff\xfe", bytes(self.rng.randbytes(64))]), False

    def empty(self) -> tuple[Any, bool]:
        if self.ws_only():
            return self.rng.choice(["", " ", "\n", "{}", "[]", "null", '""', "0", "{ }"]), False
        return self.rng.choice([None, {}, [], "", 0, False, Special("undefined")]), False

    def top_level(self) -> tuple[Any, bool]:
        frame = self.template()
        return self.rng.choice(
            [
                [frame],
                [frame, frame],
                json.dumps(frame),
                1,
                -1.5,
                True,
                "get",
                [[]],
                {"frame": frame},
                {"frames": [frame]},
            ]
        ), False

    def bad_ids(self) -> tuple[Any, bool]:
        frame = self.template()
        bad: list[Any] = [*list(WRONG["id"]), Special("nan"), Special("bigint", 5000)]
        if self.ws_only():
            bad += [Special("bigint", 4301), Special("bigint", 20)]
        frame["id"] = self.rng.choice(bad)
        if self.rng.random() < 0.3:
            del frame["id"]
        return frame, False

    def mutations(self) -> tuple[Any, bool]:
        frame = self.template()
        kinds = ["drop", "rename", "version", "swap_op", "duplicate", "truncate"]
        kind = self.rng.choice(kinds if self.ws_only() else kinds[:4])
        if kind == "drop":
            required = [
                "v",
                "id",
                "op",
                *{"get": ["key"], "set": ["key", "value"]}.get(frame["op"], []),
            ]
            del frame[self.rng.choice(required)]
        elif kind == "rename":
            field = self.rng.choice(list(frame))
            frame[field.upper() if field != field.upper() else field + "_"] = frame.pop(field)
        elif kind == "version":
            frame["v"] = self.rng.choice([0, 2, 3, 10, -1])
        elif kind == "swap_op":
            # An op that takes none of the frame's arguments, or misses a required one.
            frame["op"] = self.rng.choice(["subscribe", "unsubscribe"])
            frame.setdefault("key", "k")
        elif kind == "duplicate":
            pairs = list(frame.items())
            field = self.rng.choice(["v", "op", "id"])
            pairs.append((field, {"v": 2, "op": "nope", "id": -1}[field]))
            return DupKeys(pairs), False
        else:
            text = json.dumps(frame)
            return text[: self.rng.randint(1, len(text) - 1)], False
        return frame, False


#: A websocket frame past the worker's frame limit (the test runs the worker with small
#: ``KANBAN_MAX_VALUE_BYTES`` and ``KANBAN_MAX_DOCUMENT_BYTES``, 64 KiB: a frame limit of
#: 472 KiB); a host value past the SDK's 1 MiB.
OVERSIZE_WS: Final = 500_000
OVERSIZE_HOST: Final = 1_048_577


def reply_id_of(frame: Any) -> int | None:
    """The id the bridge answers to: a positive safe integer ``id`` of an object frame."""
    if isinstance(frame, DupKeys):
        frame = dict(frame.pairs)
    if isinstance(frame, Special) and frame.kind == "cycle":
        return 1  # the revived object is {v: 1, id: 1, op: "set", key: "k", value: itself}
    if isinstance(frame, dict):
        rid = frame.get("id")
        if type(rid) is int and 0 < rid <= MAX_ID:
            return rid
    return None


def generate(seed: int, count: int, side: Side) -> Iterator[Fuzz]:
    """``count`` malformed frames, categories in a seeded round robin with random content."""
    gen = Generator(seed, side)
    categories = CATEGORIES if side == "ws" else HOST_CATEGORIES
    makers: dict[str, Callable[[], tuple[Any, bool]]] = {c: getattr(gen, c) for c in categories}
    # A whole-frame oversize is slow to build and send: keep it to one frame in ~200.
    for n in range(count):
        category = categories[n % len(categories)]
        while True:
            frame, oversized = makers[category]()
            if not oversized or gen.rng.random() < 0.1:
                break
        if side == "ws" and isinstance(frame, bytes):
            yield Fuzz(category, frame, None, oversized)
            continue
        if (
            side == "ws"
            and isinstance(frame, str)
            and category in {"non_json", "empty", "mutations"}
        ):
            yield Fuzz(category, frame, None, oversized)  # raw text, not a JSON string
            continue
        yield Fuzz(category, render(frame, side), reply_id_of(frame), oversized)
