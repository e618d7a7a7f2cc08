"""Card order within a column, as the Board plugin computes it (``rankBetween`` in
bridge_js/plugins/board/board-core.js; tests/kanban/data/test_board.py runs both and
compares).

A rank is a base-36 fraction written without "0." and without trailing zeros, compared as
a plain string. Between any two distinct ranks there is always another one, so a moved or
added card takes a rank between its neighbours and no other card is rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

DIGITS: Final = "0123456789abcdefghijklmnopqrstuvwxyz"
RANK_RE: Final = re.compile(r"[0-9a-z]*[1-9a-z]")
MAX_RANK_LENGTH: Final = 256
#: What a card without a valid rank sorts as (the plugin's normalizeCard).
DEFAULT_RANK: Final = "i"


def is_rank(value: object) -> bool:
    return (
        isinstance(value, str)
        and len(value) <= MAX_RANK_LENGTH
        and RANK_RE.fullmatch(value) is not None
    )


def _midpoint(low: str, high: str | None) -> str:
    if high is not None:
        same = 0
        while same < len(high) and (low[same] if same < len(low) else "0") == high[same]:
            same += 1
        if same > 0:
            return high[:same] + _midpoint(low[same:], high[same:])
    a = DIGITS.index(low[0]) if low else 0
    b = DIGITS.index(high[0]) if high is not None else len(DIGITS)
    if b - a > 1:
        return DIGITS[(a + b + 1) // 2]  # JavaScript's Math.round((a + b) / 2)
    if high is not None and len(high) > 1:
        return high[:1]
    return DIGITS[a] + _midpoint(low[1:], None)


def rank_between(before: str | None, after: str | None) -> str:
    """A rank strictly between ``before`` and ``after`` (None: an open end)."""
    for rank in (before, after):
        if rank is not None and not is_rank(rank):
            raise ValueError(f"bad rank {rank!r}")
    if before is not None and after is not None and before >= after:
        raise ValueError(f"ranks out of order: {before} >= {after}")
    return _midpoint(before or "", after)


def rank_for_placement(ranks: Sequence[str], index: int) -> str:
    """The rank for a card placed at ``index`` of a column whose other cards have
    ``ranks``, in order. Equal ranks (two writers inserting at one spot at once) leave no
    room between them, so the card goes after the whole tie."""
    index = max(0, min(index, len(ranks)))
    before = ranks[index - 1] if index > 0 else None
    after = next((rank for rank in ranks[index:] if before is None or rank > before), None)
    return rank_between(before, after)
