"""R6: a daphne worker SIGKILLed mid-write leaves no partial write and loses no acknowledged one.

Each trial starts five writers against one worker, each writing one key (or knowledge
document) over and over: a plain set and an ``updateValue`` compare-and-set increment over
REST, the same two over the bridge websocket, and Knowledge ``create`` over the bridge (a
multi-write commit: index, page, locator and body in one transaction). Once every writer has
an acknowledgement, the test waits a random 0-250 ms and SIGKILLs the worker; a standby
worker, booted during the trial, serves the next one.

After each kill (and once PostgreSQL has ended the dead worker's sessions) the database is
checked: every key holds exactly its last acknowledged value with that revision, or else
exactly the one write that was in flight, whole, with a later revision (values carry a
digest of their payload); its last write source names the writer's transport; the knowledge
index lists exactly the acknowledged documents plus the in-flight ones that landed, each
with its exact body, and an in-flight document that did not land left no body behind; every
revision of a trial is greater than every revision stored before it; a write sent after the
kill never lands. Printed: trials, acknowledged writes, writes in flight at the kill and
how many of those landed.

``KANBAN_R6_TRIALS`` sets the trials (default 12, about 40 s on a loaded 2-core machine, where
a worker's boot dominates a trial; the full run is 200). Runs on SQLite (the workers share
the file database) and on PostgreSQL."""

from __future__ import annotations

import collections
import hashlib
import http.client
import itertools
import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

import pytest
from django.db import connection
from django.test import Client
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin

from kanban.accounts.tokens import token_create
from storage.errors import KanbanError
from storage.knowledge import knowledge_get, knowledge_list
from storage.kv import Dataset, kv_get
from tests.factories import a_project, a_user
from tests.live import LiveServer, worker_env
from tests.reliability.increments import bridge_round_trip

TRIALS = int(os.environ.get("KANBAN_R6_TRIALS", "12"))
BLOB_BYTES = 64 * 1024
MAX_KILL_DELAY = 0.25
#: Workers booting while trials run: a boot takes seconds on a loaded machine, a trial less.
STANDBYS = 2
#: What a client sees when the worker dies under it: the request's outcome is unknown.
TRANSPORT_ERRORS = (OSError, http.client.HTTPException, ConnectionClosed)

# A long scenario: CI's PostgreSQL + Redis pass runs it, the README's command leaves it out.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@dataclass
class Record:
    """One write as the client saw it."""

    writer: str
    trial: int
    value: Any
    sent_at: float
    revision: str | None = None  # set when acknowledged (or found landed)
    acknowledged: bool = False
    document_id: str | None = None


@dataclass
class Writer:
    name: str
    transport: str  # "rest" | "bridge"
    kind: str  # "set" | "cas" | "doc"
    records: list[Record] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"r6/{self.name}"

    @property
    def via(self) -> str:
        return "api" if self.transport == "rest" else "bridge"


WRITERS = [
    Writer("rest-set", "rest", "set"),
    Writer("rest-cas", "rest", "cas"),
    Writer("bridge-set", "bridge", "set"),
    Writer("bridge-cas", "bridge", "cas"),
    Writer("bridge-doc", "bridge", "doc"),
]


def blob_value(writer: str, trial: int, n: int) -> dict[str, Any]:
    blob = os.urandom(BLOB_BYTES // 2).hex()
    digest = hashlib.sha256(blob.encode()).hexdigest()
    return {"writer": writer, "trial": trial, "n": n, "blob": blob, "digest": digest}


class Rest:
    def __init__(self, base: str, token: str, project: str, key: str) -> None:
        parts = urlsplit(base)
        assert parts.hostname is not None
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        self.path = f"/api/v1/projects/{project}/kv/{key}"
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def request(self, method: str, body: Any = None) -> tuple[int, Any]:
        payload = None if body is None else json.dumps(body)
        self.connection.request(method, self.path, body=payload, headers=self.headers)
        response = self.connection.getresponse()
        return response.status, json.loads(response.read())

    def close(self) -> None:
        self.connection.close()


class Bridge:
    def __init__(self, base: str, session: str, project: str) -> None:
        self.socket: ClientConnection = connect(
            f"ws{base.removeprefix('http')}/ws/boards/{project}/",
            origin=Origin(base),
            additional_headers={"Cookie": f"sessionid={session}"},
            open_timeout=30,
            legacy=True,
            close_timeout=1,
            max_size=None,
        )
        self.next_id = 0

    def call(self, op: str, **arguments: Any) -> Any:
        self.next_id += 1
        reply = bridge_round_trip(self.socket, self.next_id, op, arguments)
        if not reply.get("ok"):
            raise AssertionError(f"{op} refused: {reply['error']}")
        return reply["result"]

    def close(self) -> None:
        self.socket.close()


@dataclass
class Trial:
    number: int
    base: str
    token: str
    session: str
    project: str
    acknowledged: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    errors: list[BaseException] = field(default_factory=list)


def run_writer(writer: Writer, trial: Trial, counter: Callable[[], int]) -> None:
    """Write until the worker dies; every write is recorded before it is sent."""
    client: Rest | Bridge
    try:
        if writer.transport == "rest":
            client = Rest(trial.base, trial.token, trial.project, writer.key)
        else:
            client = Bridge(trial.base, trial.session, trial.project)
    except TRANSPORT_ERRORS:
        return  # the worker died before this writer connected
    first = True
    try:
        while True:
            n = counter()
            try:
                record = send_one(writer, client, trial.number, n)
            except _Unanswered:
                return
            if first:
                trial.acknowledged.release()
                first = False
            assert record.acknowledged
    except BaseException as error:  # surfaced by the test, not lost in a thread
        trial.errors.append(error)
    finally:
        client.close()


class _Unanswered(Exception):
    pass


def send_one(writer: Writer, client: Rest | Bridge, trial: int, n: int) -> Record:
    expected: Any = None
    if writer.kind == "cas":
        try:  # a read; a failure here leaves no write in flight
            if isinstance(client, Rest):
                status, current = client.request("GET")
                found = status == 200
                assert status in (200, 404), current
            else:
                current = client.call("get", key=writer.key)
                found = current["found"]
        except TRANSPORT_ERRORS:
            raise _Unanswered from None
        value: Any = current["value"] + 1 if found else 1
        expected = str(current["revision"]) if found else None
    elif writer.kind == "set":
        value = blob_value(writer.name, trial, n)
    else:
        value = {"title": f"trial {trial} document {n}", "markdown": f"# {n}\n\n" + "x" * 4096}
    record = Record(writer.name, trial, value, time.monotonic())
    if writer.kind == "doc":
        record.document_id = f"t{trial}-n{n}"
    writer.records.append(record)
    try:
        if isinstance(client, Rest):
            body: dict[str, Any] = {"value": value}
            if writer.kind == "cas":
                body["expectedRevision"] = expected
            status, reply = client.request("PUT", body)
            assert status == 200, reply
        elif writer.kind == "doc":
            reply = client.call("knowledge.create", key=record.document_id, value=value)
        else:
            arguments: dict[str, Any] = {"key": writer.key, "value": value}
            if writer.kind == "cas":
                arguments["expectedRevision"] = expected
            reply = client.call("set", **arguments)
    except TRANSPORT_ERRORS:
        raise _Unanswered from None
    record.revision, record.acknowledged = str(reply["revision"]), True
    return record


@dataclass
class Tally:
    acknowledged: int = 0
    in_flight: int = 0
    landed: int = 0
    after_kill: int = 0


def check_kv_writer(writer: Writer, dataset: Dataset, reaped_at: float, tally: Tally) -> int:
    """One key holds its last acknowledged write, or the one unanswered write, whole."""
    acked = [r for r in writer.records if r.acknowledged]
    unanswered = [r for r in writer.records if not r.acknowledged and r.revision is None]
    assert len(unanswered) <= 1, f"{writer.name}: one write at a time"
    stored = kv_get(dataset=dataset, key=writer.key)
    assert stored is not None and acked, f"{writer.name}: acknowledged writes are stored"
    last = acked[-1]
    if unanswered and stored.revision != last.revision:
        record = unanswered[0]
        assert record.sent_at < reaped_at, f"{writer.name}: a write sent after the kill landed"
        assert stored.value == record.value, f"{writer.name}: a partial or foreign value"
        assert int(stored.revision) > int(last.revision)
        record.revision = stored.revision
        tally.landed += 1
    else:
        assert stored.revision == last.revision, f"{writer.name}: acknowledged write lost"
        assert stored.value == last.value, f"{writer.name}: a partial or foreign value"
    if writer.kind == "set":
        blob = stored.value["blob"]
        assert hashlib.sha256(blob.encode()).hexdigest() == stored.value["digest"]
    else:
        landed = sum(1 for r in writer.records if r.revision and not r.acknowledged)
        assert stored.value == len(acked) + landed, f"{writer.name}: an increment lost"
    assert stored.source is not None and stored.source["via"] == writer.via
    assert stored.source["user"] == "bob"
    for record in unanswered:
        if record.sent_at < reaped_at:
            tally.in_flight += 1
        else:
            tally.after_kill += 1
        if record.revision is None:
            record.revision = ""  # settled: did not land
    return int(stored.revision)


def listed_documents(project_id: UUID) -> tuple[list[str], int]:
    ids: list[str] = []
    cursor = None
    while True:
        page = knowledge_list(project_id=project_id, cursor=cursor)
        ids.extend(abstract.id for abstract in page.documents)
        total = page.total
        if page.next_cursor is None:
            return ids, total
        cursor = page.next_cursor


def check_documents(
    writer: Writer, project_id: UUID, trial: int, reaped_at: float, tally: Tally
) -> int:
    """The index lists exactly the acknowledged documents and the in-flight ones that landed,
    each with its whole body; one that did not land left nothing behind."""
    ids, total = listed_documents(project_id)
    assert len(ids) == len(set(ids)) == total, "the index agrees with its count"
    listed = set(ids)
    high = 0
    for record in writer.records:
        assert record.document_id is not None
        if record.trial != trial:
            assert (record.document_id in listed) == bool(record.revision)
            continue
        if not record.acknowledged:
            if record.sent_at < reaped_at:
                tally.in_flight += 1
            else:
                tally.after_kill += 1
            if record.document_id not in listed:
                with pytest.raises(KanbanError):
                    knowledge_get(project_id=project_id, document_id=record.document_id)
                record.revision = ""
                continue
            assert record.sent_at < reaped_at, "a document sent after the kill landed"
            tally.landed += 1
        assert record.document_id in listed, f"document {record.document_id} lost"
        document = knowledge_get(project_id=project_id, document_id=record.document_id)
        assert (document.title, document.markdown) == (
            record.value["title"],
            record.value["markdown"],
        ), "a partial document"
        record.revision = record.revision or document.revision
        high = max(high, int(document.revision))
    expected = {r.document_id for r in writer.records if r.revision}
    assert listed == expected, "no document beyond those written"
    return high


def sessions_of(application_name: str) -> int:
    """PostgreSQL sessions a worker opened (each worker runs with its own ``PGAPPNAME``)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
            [application_name],
        )
        (count,) = cursor.fetchone()
    return int(count)


def wait_for_sessions_to_end(application_name: str, timeout: float = 30) -> None:
    """PostgreSQL aborts a dead client's open transaction when it notices the closed socket;
    the checks must not race that (or a COMMIT the worker sent just before it died)."""
    if connection.vendor != "postgresql":
        return  # a killed SQLite writer's uncommitted pages are ignored by the next reader
    deadline = time.monotonic() + timeout
    while (count := sessions_of(application_name)) > 0:
        assert time.monotonic() < deadline, f"{count} sessions of a killed worker linger"
        time.sleep(0.02)


@dataclass
class Workers:
    """The worker under test and a standby booting in its shadow."""

    env: dict[str, str]
    made: int = 0
    every: list[LiveServer] = field(default_factory=list)

    def spawn(self) -> tuple[LiveServer, str]:
        self.made += 1
        name = f"r6-{os.getpid()}-{self.made}"
        server = LiveServer.spawn(worker_env({**self.env, "PGAPPNAME": name}))
        self.every.append(server)
        return server, name

    def stop_all(self) -> None:
        for server in self.every:
            server.stop()
            server.remove_log()


@pytest.fixture
def workers() -> Iterator[Workers]:
    pool = Workers({"KANBAN_API_RATE": "100000000/min", "KANBAN_BRIDGE_RATE": "1000000"})
    yield pool
    pool.stop_all()


def test_r6_sigkill_mid_write_leaves_no_partial_write_and_loses_no_acknowledged_one(
    workers: Workers,
) -> None:
    bob = a_user("bob")
    project = a_project(name="Killed", members={bob: "developer"})
    _, token = token_create(user=bob)
    browser = Client()
    browser.force_login(bob)
    session = browser.cookies["sessionid"].value
    dataset = Dataset(project.id)
    random.seed(os.environ.get("KANBAN_R6_SEED"))
    totals = Tally()
    high_water = 0
    started = time.monotonic()

    # One numbering for every write of the run; ``itertools.count`` hands out under the GIL.
    counter = itertools.count(1).__next__
    server, name = workers.spawn()
    server.wait_until_ready()
    if connection.vendor == "postgresql":  # the wait after each kill is not vacuous
        assert sessions_of(name) > 0, "workers name their sessions with PGAPPNAME"
    standbys = collections.deque(workers.spawn() for _ in range(STANDBYS))
    for number in range(TRIALS):
        if number + STANDBYS < TRIALS:
            standbys.append(workers.spawn())
        trial = Trial(number, server.url, token, session, str(project.id))
        threads = [
            threading.Thread(target=run_writer, args=(writer, trial, counter), daemon=True)
            for writer in WRITERS
        ]
        for thread in threads:
            thread.start()
        for _ in WRITERS:
            assert trial.acknowledged.acquire(timeout=60), f"a writer stalled: {trial.errors}"
        time.sleep(random.uniform(0, MAX_KILL_DELAY))  # the random moment of the crash
        server.kill()
        reaped_at = time.monotonic()
        for thread in threads:
            thread.join(60)
            assert not thread.is_alive(), "a writer hangs on a dead worker"
        assert not trial.errors, trial.errors
        wait_for_sessions_to_end(name)

        mine = [r for w in WRITERS for r in w.records if r.trial == number and r.acknowledged]
        tally = Tally(acknowledged=len(mine))
        trial_low = min(int(r.revision) for r in mine if r.revision)
        assert trial_low > high_water, "revisions of a trial follow every earlier revision"
        stored_high = 0
        for writer in WRITERS:
            if writer.kind == "doc":
                stored_high = max(
                    stored_high, check_documents(writer, project.id, number, reaped_at, tally)
                )
            else:
                stored_high = max(stored_high, check_kv_writer(writer, dataset, reaped_at, tally))
        high_water = max(high_water, stored_high)
        for field_name in ("acknowledged", "in_flight", "landed", "after_kill"):
            setattr(totals, field_name, getattr(totals, field_name) + getattr(tally, field_name))
        server.remove_log()
        if number + 1 < TRIALS:
            server, name = standbys.popleft()
            server.wait_until_ready()

    print(
        f"\nR6 ({connection.vendor}): {TRIALS} SIGKILLs in {time.monotonic() - started:.1f}s; "
        f"{totals.acknowledged} acknowledged writes, all present; {totals.in_flight} in flight "
        f"at the kill, {totals.landed} of them landed whole, the rest not at all; "
        f"{totals.after_kill} sent after the kill, none landed; 0 partial writes"
    )
