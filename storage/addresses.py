"""Typed, frozen addresses: ``value(namespace, key)`` and ``value_list(namespace, key)``.

The namespace and key stay separate components (never concatenated), so dynamic keys need
no escaping. Validation happens on construction, so an address that exists is valid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from storage.errors import invalid_argument

MAX_NAMESPACE_LENGTH = 255
MAX_KEY_LENGTH = 4096


#: Control characters (Unicode category Cc), which names, searches and lookups refuse.
CONTROL: Final = "\\u0000-\\u001f\\u007f-\\u009f"
#: Text with no control character and something left once spaces are trimmed; the OpenAPI
#: schema states this same pattern.
PLAIN_TEXT: Final = re.compile(f"^[^{CONTROL}]*[^\\s{CONTROL}][^{CONTROL}]*$")


def check_text(text: object, *, field: str, allow_empty: bool, max_length: int) -> str:
    """The one check for text that becomes part of an address.

    NUL and lone surrogates are refused: neither survives a round trip through PostgreSQL
    text, and NUL is the separator of the in-memory physical key.
    """
    if not isinstance(text, str):
        raise invalid_argument(f"{field} must be a string", field=field)
    if not text and not allow_empty:
        raise invalid_argument(f"{field} must not be empty", field=field)
    if len(text) > max_length:
        raise invalid_argument(f"{field} is longer than {max_length} characters", field=field)
    if "\x00" in text:
        raise invalid_argument(f"{field} must not contain NUL (U+0000)", field=field)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid_argument(f"{field} contains an unpaired surrogate", field=field) from None
    return text


@dataclass(frozen=True, slots=True)
class _Address:
    """What both kinds of address hold: a namespace and a key, checked on construction."""

    namespace: str
    key: str = ""

    def __post_init__(self) -> None:
        check_text(
            self.namespace, field="namespace", allow_empty=False, max_length=MAX_NAMESPACE_LENGTH
        )
        check_text(self.key, field="key", allow_empty=True, max_length=MAX_KEY_LENGTH)


@dataclass(frozen=True, slots=True)
class Value(_Address):
    """One replaceable durable value."""

    kind: Literal["value"] = "value"


@dataclass(frozen=True, slots=True)
class ValueList(_Address):
    """One append-only list; its elements are ordered by their global seq."""

    kind: Literal["list"] = "list"


def value(namespace: str, key: str = "") -> Value:
    return Value(namespace, key)


def value_list(namespace: str, key: str = "") -> ValueList:
    return ValueList(namespace, key)


Address = Value | ValueList
