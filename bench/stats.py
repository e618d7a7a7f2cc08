"""Figures, targets and the interleaving that makes them comparable on a shared machine."""

from __future__ import annotations

import statistics
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

A = TypeVar("A")
B = TypeVar("B")

Comparison = Literal["<=", ">="]


@dataclass(frozen=True)
class Target:
    comparison: Comparison
    limit: float

    def met(self, value: float) -> bool:
        return value <= self.limit if self.comparison == "<=" else value >= self.limit

    def __str__(self) -> str:
        return f"{'≤' if self.comparison == '<=' else '≥'} {self.limit:g}"


@dataclass
class Figure:
    """One reported number: its per-round values, summarised by the median."""

    id: str
    what: str
    unit: str  # "x" for a ratio against the baseline, otherwise an absolute unit
    target: Target | None
    rounds: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.rounds)

    @property
    def met(self) -> bool | None:
        if self.target is None or not self.rounds:
            return None
        return self.target.met(self.median)

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "what": self.what,
            "unit": self.unit,
            "median": self.median if self.rounds else None,
            "min": min(self.rounds) if self.rounds else None,
            "max": max(self.rounds) if self.rounds else None,
            "rounds": self.rounds,
            "target": None if self.target is None else str(self.target),
            "met": self.met,
            "note": self.note,
        }


def at_most(limit: float) -> Target:
    return Target("<=", limit)


def at_least(limit: float) -> Target:
    return Target(">=", limit)


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (no interpolation: p99 of 100 samples is the 99th)."""
    ordered = sorted(samples)
    if not ordered:
        raise ValueError("no samples")
    rank = max(1, min(len(ordered), round(fraction * len(ordered) + 0.5)))
    return ordered[rank - 1]


def interleave(
    rounds: int, measure: Callable[[], A], baseline: Callable[[], B]
) -> list[tuple[A, B]]:
    """Run measure and baseline alternately, starting with each in turn, so slow drift of
    the shared machine hits both sides alike."""
    pairs = []
    for index in range(rounds):
        if index % 2 == 0:
            a = measure()
            b = baseline()
        else:
            b = baseline()
            a = measure()
        pairs.append((a, b))
    return pairs


async def interleave_async(
    rounds: int, measure: Callable[[], Awaitable[A]], baseline: Callable[[], Awaitable[B]]
) -> list[tuple[A, B]]:
    pairs = []
    for index in range(rounds):
        if index % 2 == 0:
            a = await measure()
            b = await baseline()
        else:
            b = await baseline()
            a = await measure()
        pairs.append((a, b))
    return pairs
