"""B1 (engine point get / CAS set against raw psycopg) and B7 (CAS writes per second
against pgbench running the same statements)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import psycopg

from bench.stats import Figure, at_least, at_most, interleave

VALUE = {"title": "Bench card", "column": "doing", "rank": 3, "labels": ["bench"]}


def _raw_connection() -> psycopg.Connection[Any]:
    return psycopg.connect(os.environ["DATABASE_URL"], autocommit=True)


def _per_op(count: int, op: Callable[[], object]) -> float:
    start = time.perf_counter()
    for _ in range(count):
        op()
    return (time.perf_counter() - start) / count


def b1(*, rounds: int, count: int, namespace: str) -> list[Figure]:
    from storage import engine, jsoncodec
    from storage.addresses import Value
    from storage.backends.postgresql import PostgresDialect
    from storage.writes import set_value

    dialect = PostgresDialect()
    address = Value(namespace, "b1")
    engine.commit([set_value(address, VALUE)])
    raw = _raw_connection()
    text = jsoncodec.encode(VALUE)

    def engine_get() -> None:
        engine.get_value(address)

    def raw_get() -> None:
        # What a caller needs from a point read: the decoded value and its revision.
        with raw.cursor() as cursor:
            cursor.execute(dialect.get_value, (address.namespace, address.key))
            _seq, value, _source, _written = cursor.fetchone()  # type: ignore[misc]
            jsoncodec.decode(value)

    def engine_set() -> None:
        seq = state["seq"]
        state["seq"] = engine.commit([set_value(address, VALUE, expected_seq=seq)])[0].seq

    def raw_set() -> None:
        with raw.transaction(), raw.cursor() as cursor:
            cursor.execute(
                dialect._update_at,
                (text, None, time_now(), address.namespace, address.key, state["seq"]),
                prepare=True,
            )
            state["seq"] = int(cursor.fetchone()[0])  # type: ignore[index]

    # The same CAS write keeping the value's history as the KV does (50 versions a key,
    # kanban.data.kv), on a key of its own so both keep their own seq.
    kept = Value(namespace, "b1-history")
    engine.commit([set_value(kept, VALUE)])
    kept_state = {"seq": engine.get_value(kept).seq}  # type: ignore[union-attr]

    def engine_set_kept() -> None:
        seq = kept_state["seq"]
        write = set_value(kept, VALUE, expected_seq=seq, keep=50)
        kept_state["seq"] = engine.commit([write])[0].seq

    state = {"seq": engine.get_value(address).seq}  # type: ignore[union-attr]
    for warm in (engine_get, raw_get, engine_set, raw_set, engine_set_kept):
        _per_op(max(20, count // 10), warm)
    gets = interleave(rounds, lambda: _per_op(count, engine_get), lambda: _per_op(count, raw_get))
    sets = interleave(rounds, lambda: _per_op(count, engine_set), lambda: _per_op(count, raw_set))
    history = interleave(
        rounds, lambda: _per_op(count, engine_set_kept), lambda: _per_op(count, engine_set)
    )
    raw.close()
    return [
        _ratio(
            "B1 get", "engine.get_value / raw psycopg SELECT (+ JSON decode)", 1.25, gets, "engine"
        ),
        _ratio(
            "B1 CAS set",
            "engine.commit([set_value(expected_seq)]) / raw psycopg UPDATE in a transaction",
            1.10,
            sets,
            "engine",
        ),
        _ratio(
            "B1 history",
            "the CAS set keeping 50 versions of the key / the same set keeping none",
            1.2,
            history,
            "with history",
        ),
    ]


def _ratio(
    id: str, what: str, bound: float, pairs: list[tuple[float, float]], measured: str
) -> Figure:
    """A B1 figure from rounds of (measured, baseline) seconds per op: the ratio each round,
    at most ``bound``, noting the measured side's median µs per op."""
    per_op = sorted(a for a, _ in pairs)[len(pairs) // 2]
    return Figure(
        id,
        what,
        "x",
        at_most(bound),
        [a / b for a, b in pairs],
        note=f"{measured} {1e6 * per_op:.0f} µs/op",
    )


def time_now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


# B7 -------------------------------------------------------------------------------------

KEYS = 1000


def b7_seed(namespace: str) -> None:
    from storage import engine
    from storage.addresses import Value
    from storage.writes import set_value

    engine.commit([set_value(Value(namespace, f"k{i}"), VALUE) for i in range(1, KEYS + 1)])
    engine.commit([set_value(Value(namespace, "hot"), VALUE)])


def _engine_rate(clients: int, hot: bool, seconds: float, namespace: str) -> float:
    start_at = time.time() + 1.5 + 0.15 * clients  # every client has set Django up by then
    argv = [
        sys.executable,
        "-m",
        "bench.cas_client",
        namespace,
        "hot" if hot else "spread",
        str(start_at),
        str(seconds),
    ]
    children = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for _ in range(clients)]
    total = 0
    for child in children:
        out, _ = child.communicate(timeout=seconds + 60)
        if child.returncode != 0:
            raise RuntimeError(f"cas_client failed with {child.returncode}")
        total += int(out.split()[0])
    return total / seconds


def pgbench_script(namespace: str, hot: bool) -> str:
    """The statements ``engine.get_value`` then ``engine.commit([set_value(expected_seq)])``
    send, for pgbench."""
    key = "'hot'" if hot else "'k' || :k"
    quoted = namespace.replace("'", "''")
    return "\n".join(
        [
            f"\\set k random(1, {KEYS})",
            f"SELECT seq AS s, value, source, written_at FROM scalar_values "
            f"WHERE namespace = '{quoted}' AND key = {key} \\gset",
            "BEGIN;",
            "UPDATE scalar_values SET seq = nextval('storage_seq'), "
            f'value = \'{{"title":"Bench card"}}\', source = NULL, written_at = now() '
            f"WHERE namespace = '{quoted}' AND key = {key} AND seq = :s RETURNING seq;",
            "COMMIT;",
            "",
        ]
    )


def _pgbench_rate(clients: int, hot: bool, seconds: float, namespace: str) -> float:
    url = urlsplit(os.environ["DATABASE_URL"])
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as script:
        script.write(pgbench_script(namespace, hot))
    env = dict(os.environ)
    if url.password:
        env["PGPASSWORD"] = url.password
    try:
        result = subprocess.run(
            [
                "pgbench",
                "-n",
                "-M",
                "prepared",
                "-c",
                str(clients),
                "-j",
                str(clients),
                "-T",
                str(max(1, round(seconds))),
                "-f",
                script.name,
                "-h",
                url.hostname or "127.0.0.1",
                "-p",
                str(url.port or 5432),
                "-U",
                url.username or "postgres",
                url.path.lstrip("/"),
            ],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
    finally:
        os.unlink(script.name)
    match = re.search(r"tps = ([\d.]+) \(without initial connection time\)", result.stdout)
    if match is None:
        raise RuntimeError(f"could not read pgbench output:\n{result.stdout}{result.stderr}")
    return float(match.group(1))


def b7(*, rounds: int, seconds: float, namespace: str, client_counts: list[int]) -> list[Figure]:
    b7_seed(namespace)
    figures = []
    for hot in (True, False):
        for clients in client_counts:
            pairs = interleave(
                rounds,
                lambda c=clients, h=hot: _engine_rate(c, h, seconds, namespace),  # type: ignore[misc]
                lambda c=clients, h=hot: _pgbench_rate(c, h, seconds, namespace),  # type: ignore[misc]
            )
            engine_rate = sorted(a for a, _ in pairs)[len(pairs) // 2]
            figures.append(
                Figure(
                    f"B7 {'hot' if hot else 'spread'} c={clients}",
                    f"CAS attempts/s, {clients} client(s), "
                    f"{'one hot key' if hot else f'{KEYS} keys'} / pgbench",
                    "x",
                    at_least(0.85),
                    [a / b for a, b in pairs],
                    note=f"engine {engine_rate:.0f}/s",
                )
            )
    return figures
