"""``python -m bench.profile FILE...``: where a profiled worker spent its time.

Reads py-spy's raw (collapsed-stack) files that ``KANBAN_BENCH_PROFILE=DIR python -m bench``
leaves in DIR and prints the share of samples that pass through each function (inclusive)
and that end in it (self), busiest first. Idle samples (the event loop waiting in
``select``/``epoll``) are counted apart, so shares are of busy time.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

IDLE = (".select (selectors.py", "poll (selectors.py", "_worker (concurrent/futures/thread.py")
TOP = 30


def summarize(path: Path, top: int = TOP) -> str:
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    busy = idle = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")[1:]  # the first entry names the process
        n = int(count)
        if not frames or any(mark in frames[-1] for mark in IDLE):
            idle += n
            continue
        busy += n
        for frame in set(frames):
            inclusive[frame] += n
        own[frames[-1]] += n
    lines = [f"{path.name}: {busy} busy samples, {idle} idle"]
    lines.append(f"{'incl':>6} {'self':>6}  function")
    for frame, n in inclusive.most_common(top):
        lines.append(f"{100 * n / busy:5.1f}% {100 * own[frame] / busy:5.1f}%  {frame}")
    lines.append("top self:")
    for frame, n in own.most_common(top // 2):
        lines.append(f"{100 * n / busy:5.1f}%  {frame}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for name in argv:
        print(summarize(Path(name)))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
