"""``python -m bench.engine_profile [hot|spread] [SECONDS]``: where one B7 client spends a
compare-and-set attempt.

Seeds B7's keys, runs one ``bench.cas_client`` (the engine's read and conditional update, as
B7 times them against pgbench) sampled by py-spy with its waits included, and prints the
attempts per second, the client's CPU per attempt against its wall time per attempt, and
``bench.profile``'s summary: the share of samples in each function, so the time spent
waiting on PostgreSQL (psycopg's ``wait``) stands beside the Python work. Same environment
as ``python -m bench`` (bench/env.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench import env


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else "spread"
    seconds = float(argv[1]) if len(argv) > 1 else 10.0
    if mode not in ("hot", "spread"):
        print(__doc__, file=sys.stderr)
        return 2
    env.configure_environment()
    env.migrate()
    env.setup_django()
    from bench.engine_bench import b7_seed
    from bench.profile import summarize

    namespace = "bench.engine_profile"
    b7_seed(namespace)
    directory = Path(os.environ.get("KANBAN_BENCH_PROFILE", "var/engine-profile"))
    directory.mkdir(parents=True, exist_ok=True)
    out = directory / f"cas-{mode}.txt"
    start_at = time.time() + 3.0  # Django set up in the client, py-spy attached
    client = subprocess.Popen(
        [sys.executable, "-m", "bench.cas_client", namespace, mode, str(start_at), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or "py-spy"
    profiler = subprocess.Popen(
        [
            *(spy, "record", "--pid", str(client.pid), "--rate", "500", "--idle"),
            *("--format", "raw", "--output", str(out), "--nonblocking"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert client.stdout is not None
    attempts = int(client.stdout.read().split()[0])
    _, status, usage = os.wait4(client.pid, 0)
    client.returncode = os.waitstatus_to_exitcode(status)
    if profiler.poll() is None:
        profiler.send_signal(signal.SIGINT)
    profiler.wait(30)
    cpu = usage.ru_utime + usage.ru_stime  # Django's setup too: an upper bound
    print(
        f"{attempts} {mode} compare-and-set attempts in {seconds:.0f} s "
        f"({attempts / seconds:.0f}/s, {seconds / attempts * 1000:.3f} ms each); the client's "
        f"CPU, its start included, {cpu / attempts * 1000:.3f} ms an attempt"
    )
    print(summarize(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
