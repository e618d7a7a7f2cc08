"""A PostgreSQL cluster a test owns (R15 stops and starts it under load), on a free port in
a temporary folder, never the shared one. Debian's server binaries; as root, run as the
``postgres`` user, which initdb requires."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.live import HOST, free_port


def server_binaries() -> Path | None:
    """Debian's newest server version's ``bin`` folder, or None when none is installed."""
    root = Path("/usr/lib/postgresql")
    versions = sorted(root.glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name))
    return versions[-1].parent if versions else None


@dataclass
class Cluster:
    bin: Path
    data: Path
    port: int

    @property
    def url(self) -> str:
        return f"postgres://postgres@{HOST}:{self.port}/postgres"

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / argv[0]), *argv[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=check, capture_output=True, text=True, timeout=60)

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses={HOST} -k {self.data} -c fsync=off"
        log = str(self.data / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", log, "-w", "start")

    def stop(self) -> None:
        """As an operator restarting it would: every session ended, nothing in flight."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)

    def ready(self) -> bool:
        probe = self._run("pg_isready", "-h", HOST, "-p", str(self.port), check=False)
        return probe.returncode == 0


@contextlib.contextmanager
def private_cluster() -> Iterator[Cluster]:
    binaries = server_binaries()
    assert binaries is not None, "no PostgreSQL server binaries under /usr/lib/postgresql"
    folder = Path(tempfile.mkdtemp(prefix="kanban-pg-"))
    data = folder / "data"
    data.mkdir()
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
        shutil.chown(data, "postgres")
    cluster = Cluster(binaries, data, free_port())
    cluster._run("initdb", "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
    cluster.start()
    try:
        deadline = time.monotonic() + 30
        while not cluster.ready():
            assert time.monotonic() < deadline, "the private cluster did not start"
            time.sleep(0.1)
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
