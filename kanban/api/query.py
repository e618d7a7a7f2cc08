"""Query parameters of the REST views: only the ones a view takes, and whole numbers parsed
once (their ranges are the services' to check)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from storage.errors import invalid_argument

#: The largest whole number a query parameter takes: what the database's bigint holds.
MAX_QUERY_NUMBER = 2**63 - 1


def check_query(
    query: Mapping[str, str], *, allowed: Iterable[str], numbers: Iterable[str] = ()
) -> dict[str, Any]:
    """The parameters present, ``numbers`` among them as ints; an unknown one is refused."""
    names, whole = tuple(allowed), frozenset(numbers)
    extra = sorted(set(query) - set(names))
    if extra:
        raise invalid_argument(f"unknown parameter {extra[0]!r}", field=extra[0])
    found: dict[str, Any] = {}
    for name in names:
        if name not in query:
            continue
        raw = query[name]
        found[name] = whole_number(raw, field=name) if name in whole else raw
    return found


def whole_number(raw: str, *, field: str) -> int:
    """A query parameter's whole number: ASCII digits, at most a bigint (the range a
    service takes is the service's to check, with its own words)."""
    if not raw.isdecimal() or not raw.isascii() or int(raw) > MAX_QUERY_NUMBER:
        raise invalid_argument(f"{field} is a whole number", field=field)
    return int(raw)
