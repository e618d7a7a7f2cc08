"""One B7 client process: compare-and-set loops through the engine until the deadline.

    python -m bench.cas_client NAMESPACE hot|spread START_AT SECONDS

Prints the number of attempts (read + conditional update, committed or refused) made
between START_AT and START_AT + SECONDS, the unit pgbench counts as a transaction.
"""

from __future__ import annotations

import random
import sys
import time


def main(namespace: str, mode: str, start_at: float, seconds: float) -> None:
    from bench.env import configure_environment, setup_django

    configure_environment()
    setup_django()
    from storage import engine
    from storage.addresses import Value
    from storage.errors import Conflict
    from storage.writes import set_value

    value = {"title": "Bench card"}
    hot = Value(namespace, "hot")
    keys = [Value(namespace, f"k{i}") for i in range(1, 1001)]
    engine.get_value(hot)  # connect before the clock starts
    time.sleep(max(0.0, start_at - time.time()))
    deadline = time.monotonic() + seconds
    attempts = conflicts = 0
    while time.monotonic() < deadline:
        address = hot if mode == "hot" else random.choice(keys)
        current = engine.get_value(address)
        assert current is not None
        try:
            engine.commit([set_value(address, value, expected_seq=current.seq)])
        except Conflict:
            conflicts += 1
        attempts += 1
    print(attempts, conflicts)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
