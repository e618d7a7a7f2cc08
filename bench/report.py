"""The table on stdout, ``results/latest.json`` and the chart of ratios against targets."""

from __future__ import annotations

import json
import platform
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.stats import Figure

RESULTS = Path(__file__).resolve().parent / "results"


def _number(value: float, unit: str) -> str:
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:.3g} {unit}"


def table(figures: Sequence[Figure]) -> str:
    rows = [("id", "median", "min-max", "target", "ok", "rounds", "note")]
    for f in figures:
        if not f.rounds:
            continue
        rows.append(
            (
                f.id,
                _number(f.median, f.unit),
                f"{_number(min(f.rounds), f.unit)}-{_number(max(f.rounds), f.unit)}",
                "" if f.target is None else f"{f.target}{'x' if f.unit == 'x' else ' ' + f.unit}",
                {True: "yes", False: "MISS", None: ""}[f.met],
                str(len(f.rounds)),
                f.note,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for index, row in enumerate(rows):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
        if index == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(lines)


def write_json(
    figures: Sequence[Figure], errors: dict[str, str], settings: dict[str, Any], path: Path
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": platform.python_version(),
        "settings": settings,
        "figures": [f.as_dict() for f in figures],
        "errors": errors,
    }
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def write_chart(figures: Sequence[Figure], path: Path) -> None:
    """One bar per ratio, normalised by its target so every bar reads "1 = the target";
    whiskers show min-max across rounds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [f for f in figures if f.rounds and f.target is not None and f.target.limit > 0]
    if not shown:
        return
    labels, medians, lows, highs, colours = [], [], [], [], []
    for f in shown:
        assert f.target is not None
        # Scale so that under 1 is good for both directions of target.
        if f.target.comparison == "<=":
            scale = [v / f.target.limit for v in (f.median, min(f.rounds), max(f.rounds))]
        else:
            scale = [
                f.target.limit / v if v else float("inf")
                for v in (f.median, max(f.rounds), min(f.rounds))
            ]
        labels.append(f"{f.id}  ({f.target}{'x' if f.unit == 'x' else ' ' + f.unit})")
        medians.append(scale[0])
        lows.append(max(0.0, scale[0] - scale[1]))
        highs.append(max(0.0, scale[2] - scale[0]))
        colours.append("#3a7d44" if f.met else "#c0392b")
    height = max(3.0, 0.32 * len(shown) + 1.2)
    fig, ax = plt.subplots(figsize=(10, height))
    positions = list(range(len(shown)))[::-1]
    ax.barh(positions, medians, xerr=[lows, highs], color=colours, capsize=2)
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_yticks(positions, labels, fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("median / target (≤ 1 meets the target; whiskers: min-max over rounds)")
    ax.set_title("Kanban bench: ratios against same-run baselines")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
