"""A parent for the tests' daphne workers that has already imported what they import.

A worker spends about 1.2 of its 1.6 s start importing Django, DRF, Channels, the MCP SDK,
psycopg, Twisted and autobahn; the suite starts a hundred of them per pass. This process
imports those once and forks a worker per request, which then sets Django up and runs
daphne as ``python -m kanban.daphne`` would.

It must not set Django up itself: the ``daphne`` app installs Twisted's asyncio reactor
when it loads, and a reactor made before a fork would share one epoll instance among every
worker. Each child installs its own. ``tests.live`` checks that nothing here installed one.

A worker may ask for an environment of its own (a test's settings): the child takes it
before Django reads any, so one zygote serves every test, unless a variable that one of the
preloaded imports reads when it loads differs (``PRELOAD_READS``); that worker starts cold.

Line-delimited JSON on stdin, one answer per line on stdout:
``{"op": "fork", "log": PATH, "argv": [...], "env": {...}}`` -> ``{"pid": N}``;
``{"op": "poll", "pid": N}`` -> ``{"code": EXIT_CODE_OR_NULL}`` (reaps a worker that ended).

``Zygote`` and ``WorkerProcess`` are the test process's side: a worker forked here answers
what ``tests.live.LiveServer`` asks of a ``subprocess.Popen``.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

#: Every heavy import a worker makes before ``django.setup()``, none of which starts a
#: thread, opens a connection or installs a reactor.
PRELOAD = (
    "django.core.handlers.asgi",
    "django.db.models",
    "django.contrib.admin.sites",
    "django.forms",
    "django.template.defaulttags",
    "rest_framework",
    "channels.routing",
    "channels.generic.websocket",
    "channels_redis.core",
    "mcp.server.lowlevel",
    "mcp.server.streamable_http_manager",
    "mcp.types",
    "pydantic",
    "psycopg",
    "psycopg_pool",
    "redis.asyncio",
    "twisted.internet.posixbase",
    "twisted.internet.asyncioreactor",
    "autobahn.twisted.websocket",
    "prometheus_client",
)

#: What those imports read from the environment as they load: a worker whose values differ
#: from the zygote's cannot be forked from it (prometheus_client picks its value class once).
PRELOAD_READS = ("PROMETHEUS_MULTIPROC_DIR", "prometheus_multiproc_dir")


def preloads_alike(env: Mapping[str, str], other: Mapping[str, str]) -> bool:
    """Whether a zygote started with ``env`` imported what a worker of ``other`` would."""
    names = {n for n in (*env, *other) if n.startswith("PYTHON") or n in PRELOAD_READS}
    return all(env.get(name) == other.get(name) for name in names)


def run_worker(request: dict[str, Any]) -> None:
    """In the forked child: become ``python -m kanban.daphne ARGV`` writing to the log."""
    log = os.open(request["log"], os.O_WRONLY | os.O_APPEND)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(devnull)
    os.environ.clear()
    os.environ.update(request["env"])
    code = 0
    try:
        from kanban.daphne import main

        sys.argv = ["kanban.daphne", *request["argv"]]
        main(request["argv"])
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def poll(pid: int) -> int | None:
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # reaped already
        return _exited.get(pid)
    if done:
        _exited[pid] = os.waitstatus_to_exitcode(status)
    return _exited.get(pid)


_exited: dict[int, int] = {}


def main() -> None:
    for module in PRELOAD:
        importlib.import_module(module)
    answer: dict[str, Any] = {"ready": "twisted.internet.reactor" not in sys.modules}
    while True:
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            return  # the test process is done with us
        request = json.loads(line)
        if request["op"] == "fork":
            pid = os.fork()
            if pid == 0:
                run_worker(request)
            answer = {"pid": pid}
        else:
            answer = {"code": poll(request["pid"])}


class Zygote:
    """The test process's handle on one zygote, started with the environment every worker
    it forks gets."""

    def __init__(self, env: Mapping[str, str], cwd: Path, log: Path) -> None:
        self.env = dict(env)
        with log.open("ab") as errors:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.zygote"],
                cwd=cwd,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )
        self._lock = threading.Lock()
        if not self._answer().get("ready"):
            self.close()
            raise RuntimeError("the zygote installed a Twisted reactor before forking")

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the zygote exited with code {self.process.wait()}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            stdin: IO[str] | None = self.process.stdin
            assert stdin is not None
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
            return self._answer()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def fork(self, argv: list[str], log: Path, env: Mapping[str, str]) -> WorkerProcess:
        request = {"op": "fork", "argv": argv, "log": str(log), "env": dict(env)}
        return WorkerProcess(self, self.ask(request)["pid"])

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()  # its loop ends with its input
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class WorkerProcess:
    """A forked worker, with the part of ``subprocess.Popen`` that ``LiveServer`` uses.
    Only its parent, the zygote, can reap it, so ``poll`` asks the zygote."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self.zygote, self.pid = zygote, pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and self.zygote.alive:
            self.returncode = self.zygote.ask({"op": "poll", "pid": self.pid})["code"]
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if not self.zygote.alive:
                raise RuntimeError(f"the zygote of worker {self.pid} is gone")
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0)
            time.sleep(0.01)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


if __name__ == "__main__":
    main()
