"""R2: concurrent ``updateValue`` increments of one key lose nothing, over REST and the bridge.

4 client processes x 8 writers (4 over REST with a bearer token, 4 over the bridge websocket
with a session) x N increments of ONE key, against two daphne workers on PostgreSQL. Each
increment is the SDK's compare-and-set loop (``tests/reliability/increments.py``).

Measured and asserted: the final value is exactly 32 x N; every successful write's revision
is unique, and the writes form one chain in commit order: each write's expected revision is
the revision of exactly one earlier write, every revision is greater than the one it
replaced (revisions are the engine's global sequence, ordered as integers), the chain covers
every write and ends at the stored revision, and the n-th link wrote the value n. Printed:
the retry histogram (attempts per increment -> count, per transport) and throughput. A naive
control (read, then write without ``expectedRevision``) under the same load must lose
updates; it prints how many.

``KANBAN_R2_INCREMENTS`` sets N per writer (default 8: 256 increments, about 40 s in CI's
PostgreSQL pass beside the rest of the suite on a 2-core machine, where one hot key takes
some 20 increments/s; the full run is 1,000: 32,000 increments, about half an hour).
PostgreSQL only (skips on SQLite, like ``tests/api/test_hammer.py``)."""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.test import Client

from kanban.accounts.tokens import token_create
from tests.factories import a_project, a_user
from tests.live import LiveServer
from tests.reliability import increments as drivers

PROCESSES = 4
WRITERS = PROCESSES * drivers.WRITERS_PER_PROCESS
INCREMENTS = int(os.environ.get("KANBAN_R2_INCREMENTS", "8"))

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not os.environ.get("DATABASE_URL"), reason="R2 runs on PostgreSQL"),
]


@dataclass(frozen=True)
class Scene:
    servers: list[LiveServer]
    token: str
    session: str
    project: str


@pytest.fixture
def scene(live_servers: Callable[..., list[LiveServer]]) -> Scene:
    bob = a_user("bob")
    project = a_project(name="Incremented", members={bob: "developer"})
    _, token = token_create(user=bob)
    browser = Client()
    browser.force_login(bob)
    # 32 writers retrying on one key outrun the per-user and per-socket rate limits, which
    # are not what this row measures.
    servers = live_servers(
        2,
        env={
            "KANBAN_API_RATE": "100000000/min",
            "KANBAN_BRIDGE_RATE": "1000000",
            "KANBAN_BRIDGE_BURST": "1000000",
        },
    )
    return Scene(servers, token, browser.cookies["sessionid"].value, str(project.id))


def hammer(scene: Scene, key: str, *, naive: bool) -> tuple[list[drivers.Outcome], float]:
    jobs = [
        drivers.Job(
            urls=tuple(server.url for server in scene.servers),
            token=scene.token,
            session=scene.session,
            project=scene.project,
            key=key,
            increments=INCREMENTS,
            naive=naive,
            process=n,
        )
        for n in range(PROCESSES)
    ]
    started = time.monotonic()
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        results = pool.map(drivers.run_process, jobs)
    return [outcome for result in results for outcome in result], time.monotonic() - started


def stored(scene: Scene, key: str) -> drivers.Current:
    kv = drivers.RestKv(scene.servers[0].url, scene.token, scene.project, key)
    try:
        return kv.get()
    finally:
        kv.close()


def commit_chain(writes: list[drivers.Write]) -> list[drivers.Write]:
    """The writes in commit order, following expected revision -> revision from absence.

    Raises when two writes replaced the same revision (a lost update) or a write replaced a
    revision no write produced."""
    by_expected: dict[str | None, drivers.Write] = {}
    for write in writes:
        assert write[0] not in by_expected, f"two writes replaced revision {write[0]}"
        by_expected[write[0]] = write
    chain, revision = [], None
    while revision in by_expected:
        write = by_expected.pop(revision)
        chain.append(write)
        revision = write[1]
    assert not by_expected, f"{len(by_expected)} writes replaced a revision no write produced"
    return chain


@pytest.mark.long
def test_r2_cas_increments_lose_nothing_and_a_naive_control_loses_updates(scene: Scene) -> None:
    expected = WRITERS * INCREMENTS
    outcomes, elapsed = hammer(scene, "counter", naive=False)
    writes = [write for outcome in outcomes for write in outcome.writes]
    final = stored(scene, "counter")
    histograms: dict[str, Counter[int]] = {"rest": Counter(), "bridge": Counter()}
    for outcome in outcomes:
        histograms[outcome.transport].update(outcome.attempts)
    total = histograms["rest"] + histograms["bridge"]
    print(
        f"\nR2: {WRITERS} writers ({PROCESSES} processes, 2 workers) x {INCREMENTS} increments "
        f"in {elapsed:.1f}s = {expected / elapsed:.0f} increments/s; final={final.value} "
        f"(expected {expected}); {sum(a * n for a, n in total.items()) - expected} conflicts"
    )
    for transport, histogram in histograms.items():
        print(f"  attempts per increment -> count, {transport}: {dict(sorted(histogram.items()))}")

    assert final.value == expected
    revisions = [int(write[1]) for write in writes]
    assert len(revisions) == expected and len(set(revisions)) == expected, "no revision repeats"
    chain = commit_chain(writes)
    assert len(chain) == expected
    assert all(int(w[1]) > int(w[0] or 0) for w in chain), "revisions increase in commit order"
    assert [w[2] for w in chain] == list(range(1, expected + 1)), "link n wrote n"
    assert chain[-1][1] == final.revision
    print(f"  commit chain: {len(chain)} links, revisions {chain[0][1]} .. {chain[-1][1]}")

    naive_outcomes, naive_elapsed = hammer(scene, "naive-counter", naive=True)
    naive_final = stored(scene, "naive-counter")
    acknowledged = sum(len(outcome.writes) for outcome in naive_outcomes)
    print(
        f"  naive control: {acknowledged} acknowledged writes in {naive_elapsed:.1f}s, "
        f"final={naive_final.value}: {expected - naive_final.value} increments lost"
    )
    assert acknowledged == expected
    assert naive_final.value < expected, "read-then-write without a revision must lose updates"
