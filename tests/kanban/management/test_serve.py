"""``manage.py serve`` runs the background jobs' worker beside daphne: a job queued in the
database is imported by it, one a killed serve left running is run again, and the worker
ends when serve does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django_tasks_db.models import DBTaskResult

from kanban.jobs.imports import import_job_get, import_job_start
from kanban.models import ImportJob, Project
from tests.kanban.jobs.conftest import trello_export
from tests.live import free_port, worker_env

pytestmark = pytest.mark.django_db(transaction=True)


def children_of(pid: int) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError, ValueError):
            continue  # it ended while we looked
        if ppid == pid:
            found.append((int(entry.name), command))
    return found


def wait_for(what: str, check: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.2)
    raise AssertionError(f"waited {timeout} s for {what}")


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_serve_imports_a_queued_job_and_its_worker_ends_with_it(alice: Any) -> None:
    interrupted = import_job_start(
        actor=alice, file_name="old.json", data=trello_export(name="Old plans")
    )
    # A serve killed while importing it left both its task and the job running.
    DBTaskResult.objects.update(status="RUNNING")
    ImportJob.objects.update(status="running", attempts=1)
    job = import_job_start(actor=alice, file_name="roadmap.json", data=trello_export())
    jobs = [job, interrupted]
    env = worker_env({"KANBAN_DEMO_DATA": "0"})
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--no-migrate", "--port", str(free_port())],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        workers = wait_for(
            "the jobs worker",
            lambda: [p for p, command in children_of(serve.pid) if "kanban.jobs.worker" in command],
        )
        wait_for(
            "the imports",
            lambda: all(import_job_get(actor=alice, job_id=j.id).finished for j in jobs),
        )
        for each in jobs:
            done = import_job_get(actor=alice, job_id=each.id)
            assert done.status == "succeeded", done.error
            assert Project.objects.filter(id=done.project_id).exists()
        assert ImportJob.objects.get(id=interrupted.id).attempts == 2
    finally:
        serve.send_signal(signal.SIGTERM)  # daphne's alone, not the worker's
        serve.wait(timeout=30)
    try:
        wait_for("the worker to end with serve", lambda: not alive(workers[0]), timeout=30)
    finally:
        if alive(workers[0]):
            os.kill(workers[0], signal.SIGKILL)
