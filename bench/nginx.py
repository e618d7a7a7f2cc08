"""The repository's ``deploy/nginx.conf`` run by Debian's nginx in front of local workers, for
the reliability tests (R14-R16) and the bench (U6): the upstream servers and the listen port
are the only changes, inside the ``events``/``http`` shell a standalone nginx needs."""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.ports import HOST, Listening, free_port

CONF = Path(__file__).resolve().parent.parent / "deploy" / "nginx.conf"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def nginx_config(upstream_ports: list[int], port: int, prefix: Path, *, connections: int) -> str:
    site = CONF.read_text(encoding="utf-8")
    servers = "\n".join(f"    server {HOST}:{p};" for p in upstream_ports)
    site, upstreams = re.subn(r"^\s*server web:8000;$", servers, site, flags=re.M)
    site, listens = re.subn(r"^\s*listen 80;$", f"    listen {HOST}:{port};", site, flags=re.M)
    # Two upstreams of the same workers: the site's, and MCP's (by client, for sessions).
    assert (upstreams, listens) == (2, 1), "deploy/nginx.conf changed shape"
    temp = "\n".join(
        f"{kind}_temp_path {prefix / kind};" for kind in ("client_body", "proxy", "fastcgi")
    )
    return (
        f"daemon off;\nworker_processes 1;\nworker_rlimit_nofile {4 * connections};\n"
        f"pid {prefix / 'nginx.pid'};\nerror_log {prefix / 'error.log'} warn;\n"
        f"events {{ worker_connections {connections}; }}\n"
        f"http {{\naccess_log off;\n{temp}\nuwsgi_temp_path {prefix / 'uwsgi'};\n"
        f"scgi_temp_path {prefix / 'scgi'};\n{site}\n}}\n"
    )


@dataclass
class Nginx(Listening):
    process: subprocess.Popen[bytes]
    port: int
    prefix: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.prefix, ignore_errors=True)


@contextlib.contextmanager
def nginx_in_front_of(ports: list[int], *, connections: int = 1024) -> Iterator[Nginx]:
    """nginx balancing over the workers on ``ports`` (each client socket takes two of its
    ``connections``: the client's and the upstream's)."""
    prefix = Path(tempfile.mkdtemp(prefix="kanban-nginx-"))
    # nginx's workers drop root for "nobody": let them use the temp folders.
    prefix.chmod(0o777)
    port = free_port()
    conf = prefix / "nginx.conf"
    conf.write_text(nginx_config(ports, port, prefix, connections=connections), encoding="utf-8")
    process = subprocess.Popen(
        [NGINX, "-p", str(prefix), "-c", str(conf)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    proxy = Nginx(process, port, prefix)
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection((HOST, port), 0.2):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                log = (prefix / "error.log").read_text(errors="replace")
                raise AssertionError(f"nginx did not start: {log}")
            time.sleep(0.05)
        yield proxy
    finally:
        proxy.stop()
