"""Typed write constructors for ``commit``. Values are validated and encoded here, so a bad
value fails before any transaction starts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from storage import jsoncodec
from storage.addresses import Value, ValueList
from storage.errors import invalid_argument


class _Any:
    def __repr__(self) -> str:
        return "ANY"


#: ``expected_seq`` default: write whatever is there (no compare-and-set).
ANY: Final = _Any()
ExpectedSeq = int | None | _Any


@dataclass(frozen=True, slots=True)
class SetValue:
    address: Value
    text: str
    expected_seq: ExpectedSeq
    source: str | None
    #: Keep the new version in the key's history, which then holds at most this many
    #: versions (0: no history).
    keep: int = 0


@dataclass(frozen=True, slots=True)
class DeleteValue:
    address: Value
    expected_seq: ExpectedSeq
    source: str | None = None
    #: As ``SetValue.keep``: the deletion is kept as a version without a value.
    keep: int = 0


@dataclass(frozen=True, slots=True)
class AppendList:
    address: ValueList
    text: str


@dataclass(frozen=True, slots=True)
class DeleteList:
    address: ValueList


Write = SetValue | DeleteValue | AppendList | DeleteList


def _check_expected(expected_seq: ExpectedSeq) -> ExpectedSeq:
    if expected_seq is ANY or expected_seq is None:
        return expected_seq
    if type(expected_seq) is not int or expected_seq <= 0:
        raise invalid_argument("expected_seq must be a positive integer, None or ANY")
    return expected_seq


def _require(address: object, kind: type) -> None:
    if not isinstance(address, kind):
        raise invalid_argument(f"this write needs a {kind.__name__} address")


def _source_text(source: Mapping[str, Any] | None) -> str | None:
    return None if source is None else json.dumps(dict(source), separators=(",", ":"))


def _check_keep(keep: int) -> int:
    if type(keep) is not int or keep < 0:
        raise invalid_argument("keep must be a non-negative integer")
    return keep


def set_value(
    address: Value,
    value: Any,
    *,
    expected_seq: ExpectedSeq = ANY,
    source: Mapping[str, Any] | None = None,
    max_bytes: int | None = None,
    keep: int = 0,
) -> SetValue:
    """Replace a value. ``expected_seq=None`` means it must be absent; an int, that seq.
    With ``keep``, the key's history keeps the new version (and at most ``keep``)."""
    _require(address, Value)
    return SetValue(
        address,
        jsoncodec.encode(value, max_bytes=max_bytes),
        _check_expected(expected_seq),
        _source_text(source),
        _check_keep(keep),
    )


def delete_value(
    address: Value,
    *,
    expected_seq: ExpectedSeq = ANY,
    source: Mapping[str, Any] | None = None,
    keep: int = 0,
) -> DeleteValue:
    """Remove a value; with an int ``expected_seq``, only if that is its current seq. With
    ``keep``, the history keeps the deletion (who, when) as a version without a value."""
    _require(address, Value)
    if expected_seq is None:
        raise invalid_argument("a delete cannot require absence; pass a seq or ANY")
    return DeleteValue(
        address, _check_expected(expected_seq), _source_text(source), _check_keep(keep)
    )


def append_list(address: ValueList, element: Any, *, max_bytes: int | None = None) -> AppendList:
    _require(address, ValueList)
    return AppendList(address, jsoncodec.encode(element, max_bytes=max_bytes))


def delete_list(address: ValueList) -> DeleteList:
    _require(address, ValueList)
    return DeleteList(address)
