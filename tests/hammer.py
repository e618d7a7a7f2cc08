"""Concurrency drivers for the lost-update hammer. Standard library only at import time, so
``spawn`` children import it without Django (they talk HTTP, or set Django up themselves)."""

from __future__ import annotations

import http.client
import json
import os
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

CLIENTS_PER_PROCESS = 8


class Api:
    def __init__(self, base: str, token: str, project: str, key: str = "counter") -> None:
        parts = urlsplit(base)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.path = f"/api/v1/projects/{project}/kv/{key}"

    def request(self, method: str, body: Any = None) -> tuple[int, Any]:
        payload = None if body is None else json.dumps(body)
        self.connection.request(method, self.path, body=payload, headers=self.headers)
        response = self.connection.getresponse()
        return response.status, json.loads(response.read())


def http_client(
    base: str, token: str, project: str, increments: int, naive: bool
) -> tuple[list[int], list[int]]:
    """One client: read, add one, write back (with the revision unless ``naive``), retrying
    conflicts with jittered backoff. Returns (revisions written, retries per increment)."""
    api = Api(base, token, project)
    revisions, retries = [], []
    for _ in range(increments):
        attempt = 0
        while True:
            status, current = api.request("GET")
            value = current["value"] if status == 200 else 0
            body: dict[str, Any] = {"value": value + 1}
            if not naive:
                body["expectedRevision"] = current["revision"] if status == 200 else None
            status, reply = api.request("PUT", body)
            if status == 200:
                revisions.append(int(reply["revision"]))
                retries.append(attempt)
                break
            if status != 409 or reply.get("code") != "conflict":
                raise RuntimeError(f"unexpected reply {status}: {reply}")
            attempt += 1
            # Exponential backoff with full jitter, as a well-behaved client would.
            time.sleep(random.uniform(0, 0.004 * 2 ** min(attempt, 6)))
    return revisions, retries


def http_process(args: tuple[str, str, str, int, bool]) -> tuple[list[int], list[int]]:
    base, token, project, increments, naive = args
    with ThreadPoolExecutor(CLIENTS_PER_PROCESS) as pool:
        runs = list(
            pool.map(
                lambda _: http_client(base, token, project, increments, naive),
                range(CLIENTS_PER_PROCESS),
            )
        )
    return [r for run in runs for r in run[0]], [r for run in runs for r in run[1]]


def update_process(args: tuple[str, str, int]) -> int:
    """Eight threads running the service's compare-and-set loop directly on PostgreSQL."""
    database_url, project_id, increments = args
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kanban.settings")
    import uuid

    import django

    django.setup()
    from django.db import connection

    from storage.kv import Dataset, kv_update

    dataset = Dataset(uuid.UUID(project_id))

    def run(_: int) -> int:
        try:
            for _ in range(increments):
                kv_update(
                    dataset=dataset,
                    key="counter",
                    fn=lambda v: (v or 0) + 1,
                    source={"via": "test"},
                    max_attempts=100_000,
                )
        finally:
            connection.close()
        return increments

    with ThreadPoolExecutor(CLIENTS_PER_PROCESS) as pool:
        return sum(pool.map(run, range(CLIENTS_PER_PROCESS)))
