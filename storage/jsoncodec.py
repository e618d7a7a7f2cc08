"""Strict JSON: what a value may be, and its one canonical text encoding.

Values round-trip exactly through ``encode``/``decode``: ints stay ints, floats stay
floats, object key order is kept (stored as text, not jsonb, which would reorder keys).
"""

from __future__ import annotations

import json
import math
from typing import Any

from storage import limits
from storage.errors import ErrorCode, KanbanError, invalid_argument

MAX_DEPTH = limits.MAX_DEPTH
#: Longest integer literal accepted: Python's own limit on int/str conversion (CVE-2020-10735),
#: past which ``int()`` raises a bare ValueError that would escape as a crash.
MAX_INT_DIGITS = 4300

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _reject_constant(name: str) -> Any:
    raise invalid_argument(f"{name} is not JSON")


def _parse_int(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_INT_DIGITS:
        raise invalid_argument(f"integers are limited to {MAX_INT_DIGITS} digits")
    return int(text)


def _parse_float(text: str) -> float:
    # ``1e999`` is no NaN/Infinity token, yet it decodes to inf: refuse it the same way.
    number = float(text)
    if not math.isfinite(number):
        raise invalid_argument("NaN and Infinity are not JSON")
    return number


def check_json(value: Any, *, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``invalid_argument`` unless ``value`` is plain JSON within ``max_depth``.

    Depth counts containers: ``[]`` is depth 1, ``[[1]]`` depth 2. Iterative, so hostile
    nesting cannot exhaust the Python stack.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if item is None or item is True or item is False:
            continue
        kind = type(item)
        if kind is str:
            _check_string(item)
        elif kind is int:
            continue
        elif kind is float:
            if not math.isfinite(item):
                raise invalid_argument("NaN and Infinity are not JSON")
        elif kind is list:
            if depth + 1 > max_depth:
                raise invalid_argument(f"value is nested deeper than {max_depth}")
            stack.extend((child, depth + 1) for child in item)
        elif kind is dict:
            if depth + 1 > max_depth:
                raise invalid_argument(f"value is nested deeper than {max_depth}")
            for k, child in item.items():
                if type(k) is not str:
                    raise invalid_argument("object keys must be strings")
                _check_string(k)
                stack.append((child, depth + 1))
        else:
            raise invalid_argument(f"{kind.__name__} is not a JSON type")


def _check_string(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid_argument("strings must not contain unpaired surrogates") from None


def encode(value: Any, *, max_bytes: int | None = None) -> str:
    """Validate and encode a value to compact JSON text, enforcing the byte limit."""
    check_json(value)
    text = _encoder.encode(value)
    if max_bytes is not None and len(text) > max_bytes // 4:
        size = len(text.encode("utf-8"))
        if size > max_bytes:
            raise KanbanError(
                ErrorCode.TOO_LARGE,
                f"value is {size} bytes of JSON; the limit is {max_bytes}",
                limit=max_bytes,
            )
    return text


def encode_stored(value: Any) -> str:
    """The compact JSON text of a value read back from storage, which was checked when it
    was written: a batched read sizes every value it answers, and checking each again was
    a third of a 256-key read's time."""
    return _encoder.encode(value)


def decode(text: str) -> Any:
    """Decode stored or received JSON text, refusing NaN/Infinity (as literals or as numbers
    too large for a float) and integers too long for Python to convert."""
    try:
        return json.loads(
            text, parse_constant=_reject_constant, parse_int=_parse_int, parse_float=_parse_float
        )
    except json.JSONDecodeError as exc:
        raise invalid_argument(f"malformed JSON: {exc.msg} at position {exc.pos}") from None
    except RecursionError:
        raise invalid_argument(f"value is nested deeper than {MAX_DEPTH}") from None
