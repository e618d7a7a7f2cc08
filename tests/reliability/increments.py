"""Clients for R2: ``updateValue`` increments of one key over REST and over the websocket
bridge. Standard library and ``websockets`` only, so ``spawn`` children import it without
Django.

Both transports run the SDK's update loop (``bridge_js/src/sdk.js``): read, write the value
plus one with the read revision as ``expectedRevision`` (``null`` when absent), and on a
``conflict`` continue from the ``current`` entry the refusal carries. Unlike the SDK, which
serializes one page's updates of a key, 32 independent clients collide all the time, so a
client backs off with full jitter between attempts, as a well-behaved program would.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin

from tests.hammer import Api

WRITERS_PER_PROCESS = 8

#: (expectedRevision sent or None, revision returned, value written) for one write.
Write = tuple[str | None, str, int]


@dataclass
class Outcome:
    transport: str
    writes: list[Write] = field(default_factory=list)
    #: Attempts each increment took (1 = no conflict).
    attempts: list[int] = field(default_factory=list)


class Conflict(Exception):
    def __init__(self, current: dict[str, Any] | None) -> None:
        super().__init__("conflict")
        self.current = current


@dataclass
class Current:
    found: bool
    value: Any = None
    revision: str | None = None

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Current:
        if not raw.get("found", True):
            return cls(False)
        return cls(True, raw["value"], str(raw["revision"]))


class RestKv:
    """``GET``/``PUT /api/v1/projects/{id}/kv/{key}`` with a bearer token."""

    def __init__(self, base: str, token: str, project: str, key: str) -> None:
        self.api = Api(base, token, project, key)

    def get(self) -> Current:
        status, body = self.api.request("GET")
        if status == 404 and body.get("code") == "not_found":
            return Current(False)
        if status != 200:
            raise RuntimeError(f"GET answered {status}: {body}")
        return Current(True, body["value"], body["revision"])

    def set(self, value: Any, expected: str | None, *, naive: bool) -> str:
        payload: dict[str, Any] = {"value": value}
        if not naive:
            payload["expectedRevision"] = expected
        status, body = self.api.request("PUT", payload)
        if status == 200:
            return str(body["revision"])
        if status == 409 and body.get("code") == "conflict":
            raise Conflict(body.get("current"))
        raise RuntimeError(f"PUT answered {status}: {body}")

    def close(self) -> None:
        self.api.connection.close()


def bridge_round_trip(
    socket: ClientConnection, request_id: int, op: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    """Send one bridge request and return its reply, skipping events in between."""
    socket.send(json.dumps({"v": 1, "id": request_id, "op": op, **arguments}))
    while True:
        reply: dict[str, Any] = json.loads(socket.recv(timeout=60))
        if reply.get("id") == request_id:
            return reply


class BridgeKv:
    """The bridge websocket ``/ws/boards/{id}/`` with a session cookie, as the host relays."""

    def __init__(self, ws_url: str, origin: str, session: str, project: str, key: str) -> None:
        self.socket: ClientConnection = connect(
            f"{ws_url}/ws/boards/{project}/",
            origin=Origin(origin),
            additional_headers={"Cookie": f"sessionid={session}"},
            open_timeout=60,
            legacy=True,
            close_timeout=5,
        )
        self.key = key
        self.next_id = 0

    def call(self, op: str, **arguments: Any) -> Any:
        self.next_id += 1
        reply = bridge_round_trip(self.socket, self.next_id, op, arguments)
        if reply.get("ok"):
            return reply["result"]
        error = reply["error"]
        if error.get("code") == "conflict":
            raise Conflict(error.get("current"))
        raise RuntimeError(f"{op} refused: {error}")

    def get(self) -> Current:
        return Current.of(self.call("get", key=self.key))

    def set(self, value: Any, expected: str | None, *, naive: bool) -> str:
        arguments: dict[str, Any] = {"key": self.key, "value": value}
        if not naive:
            arguments["expectedRevision"] = expected
        return str(self.call("set", **arguments)["revision"])

    def close(self) -> None:
        self.socket.close()


Kv = RestKv | BridgeKv


def increment(kv: Kv, outcome: Outcome, *, naive: bool) -> None:
    """One ``updateValue(key, v => (v ?? 0) + 1)``; naive: read, then write blindly."""
    current = kv.get()
    for attempt in range(1, 1_000_000):
        value = (current.value if current.found else 0) + 1
        expected = current.revision if current.found else None
        try:
            revision = kv.set(value, expected, naive=naive)
        except Conflict as conflict:
            if naive:
                raise RuntimeError("a write without expectedRevision conflicted") from None
            time.sleep(random.uniform(0, 0.01 * 2 ** min(attempt, 6)))
            current = Current.of(conflict.current) if conflict.current else kv.get()
            continue
        outcome.writes.append((expected, revision, value))
        outcome.attempts.append(attempt)
        return


@dataclass(frozen=True)
class Job:
    """What one client process runs: ``WRITERS_PER_PROCESS`` writers, half of them REST."""

    urls: tuple[str, ...]
    token: str
    session: str
    project: str
    key: str
    increments: int
    naive: bool
    process: int


def writer(job: Job, index: int) -> Outcome:
    base = job.urls[(job.process + index) % len(job.urls)]
    kv: Kv
    if index % 2 == 0:
        kv = RestKv(base, job.token, job.project, job.key)
        outcome = Outcome("rest")
    else:
        ws_url = "ws" + base.removeprefix("http")
        kv = BridgeKv(ws_url, base, job.session, job.project, job.key)
        outcome = Outcome("bridge")
    try:
        for _ in range(job.increments):
            increment(kv, outcome, naive=job.naive)
    finally:
        kv.close()
    return outcome


def run_process(job: Job) -> list[Outcome]:
    """Entry point of one ``spawn`` child: its writers run as threads, all at once."""
    run: Callable[[int], Outcome] = lambda index: writer(job, index)  # noqa: E731
    with ThreadPoolExecutor(WRITERS_PER_PROCESS) as pool:
        return list(pool.map(run, range(WRITERS_PER_PROCESS)))
