"""Deployment surface: the production settings pass Django's deploy check, and the compose
file wires postgres, redis, migrations, workers and the proxy together."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.exceptions import ImproperlyConfigured

from kanban.environment import database_from_url, env_bool, env_int
from kanban.jobs.imports import DEFAULT_TRELLO_IMPORT_BYTES
from kanban.web.bodylimit import MULTIPART_ROOM
from storage import limits

ROOT = Path(__file__).resolve().parent.parent


def production_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY"}}
    env.update(
        KANBAN_MODE="production",
        SECRET_KEY=secrets.token_urlsafe(64),
        ALLOWED_HOSTS="kanban.example.com",
        **extra,
    )
    return env


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_settings_pass_the_deploy_check_with_no_warnings() -> None:
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=production_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_real_secret_key() -> None:
    env = production_env()
    env["SECRET_KEY"] = "short"
    result = manage("check", env=env)
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ({"KANBAN_MODE": "prod"}, "KANBAN_MODE"),
        ({"DEBUG": "1"}, "DEBUG"),
        ({"KANBAN_BRIDGE_RATE": "0"}, "KANBAN_BRIDGE_RATE"),
        ({"KANBAN_BRIDGE_BURST": "nan"}, "KANBAN_BRIDGE_BURST"),
        ({"KANBAN_LOGIN_MAX_FAILURES": "0"}, "KANBAN_LOGIN_MAX_FAILURES"),
        ({"KANBAN_MAX_VALUE_BYTES": "-1"}, "KANBAN_MAX_VALUE_BYTES"),
        ({"DATABASE_POOL_TIMEOUT": "soon"}, "DATABASE_POOL_TIMEOUT"),
        ({"KANBAN_FAST_PASSWORD_HASHING": "1"}, "KANBAN_FAST_PASSWORD_HASHING"),
        ({"KANBAN_TRUSTED_PROXIES": "nginx"}, "KANBAN_TRUSTED_PROXIES"),
    ],
)
def test_nonsense_settings_stop_the_process_naming_the_variable(
    extra: dict[str, str], named: str
) -> None:
    """A typo never quietly means something else: KANBAN_MODE=prod is no development mode
    with the fixed key, production never runs with DEBUG, and a zero limit is refused."""
    env = production_env(DATABASE_URL="postgres://u@127.0.0.1:1/never")
    env.update(extra)
    result = manage("check", env=env)
    assert result.returncode != 0 and named in result.stderr, result.stderr[-2000:]


def test_importing_the_settings_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "not" / "yet" / "db.sqlite3"
    code = (
        "import os; os.environ['KANBAN_SQLITE_PATH'] = " + repr(str(target)) + "; "
        "import kanban.settings"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert not target.parent.exists(), "the folder is made when a connection is, not before"


def test_database_url_is_parsed_into_django_settings() -> None:
    parsed = database_from_url("postgres://kb:p%40ss@db.internal:6543/boards?sslmode=require")
    assert parsed["ENGINE"] == "django.db.backends.postgresql"
    assert (parsed["USER"], parsed["PASSWORD"]) == ("kb", "p@ss")
    assert (parsed["HOST"], parsed["PORT"], parsed["NAME"]) == ("db.internal", "6543", "boards")
    assert parsed["OPTIONS"]["sslmode"] == "require"
    assert parsed["OPTIONS"]["pool"]["max_size"] >= 1, "connections are pooled per process"


def test_an_sqlite_database_url_names_the_file(tmp_path: Path) -> None:
    parsed = database_from_url(f"sqlite:///{tmp_path}/data/boards.sqlite3")
    assert parsed["ENGINE"] == "storage.sqlite_backend"
    assert parsed["NAME"] == tmp_path / "data" / "boards.sqlite3"
    assert parsed["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert not (tmp_path / "data").exists(), "parsing creates nothing"
    from storage.sqlite_backend.base import create_owner_only

    create_owner_only(str(parsed["NAME"]))  # what the backend does on its first connection
    assert (tmp_path / "data").is_dir(), "the folder is made; SQLite makes only the file"


@pytest.mark.parametrize("url", ["mysql://u@h/db", "redis://h:6379/0", "nonsense"])
def test_an_unsupported_database_url_refuses_to_start(url: str) -> None:
    with pytest.raises(ImproperlyConfigured):
        database_from_url(url)


@pytest.mark.parametrize(
    ("raw", "value"), [("1", True), (" Yes ", True), ("off", False), ("", True)]
)
def test_yes_no_settings_read_the_usual_spellings(
    raw: str, value: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KANBAN_FLAG", raw)
    assert env_bool("KANBAN_FLAG", default=True) is value


@pytest.mark.parametrize("raw", ["ture", "2", "enabled"])
def test_a_misspelt_yes_no_setting_refuses_to_start(
    raw: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KANBAN_FLAG", raw)
    with pytest.raises(ImproperlyConfigured, match="KANBAN_FLAG"):
        env_bool("KANBAN_FLAG", default=False)


@pytest.mark.parametrize("raw", ["twelve", "1.5", "-1"])
def test_a_number_setting_that_is_not_a_whole_number_in_range_refuses_to_start(
    raw: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KANBAN_COUNT", raw)
    with pytest.raises(ImproperlyConfigured, match="KANBAN_COUNT"):
        env_int("KANBAN_COUNT", 3)


def test_prepared_statements_are_on_unless_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "postgres://kanban@db:5432/kanban"
    assert database_from_url(url)["OPTIONS"]["prepare_threshold"] == 2
    monkeypatch.setenv("DATABASE_PREPARE_THRESHOLD", "0")
    assert database_from_url(url)["OPTIONS"]["prepare_threshold"] is None


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_runs_postgres_redis_migrations_workers_and_a_proxy(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]
    assert {"postgres", "redis", "migrate", "web", "worker", "proxy"} <= set(services)
    assert services["worker"]["command"][:3] == ["python", "manage.py", "db_worker"]
    assert services["worker"]["environment"] == services["web"]["environment"]
    web = services["web"]
    command = (ROOT / "Dockerfile").read_text().split("CMD")[1]
    assert "kanban.daphne" in yaml.safe_load(command)
    assert web["deploy"]["replicas"] >= 2, "several workers behind one address"
    assert web["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    (published,) = services["proxy"]["ports"]
    # Plain HTTP is not published to the world by default.
    assert published.startswith("${KANBAN_BIND:-127.0.0.1}:"), published


def test_compose_wires_workers_to_postgres_and_redis_in_production_mode(
    compose: dict[str, Any],
) -> None:
    env = compose["services"]["web"]["environment"]
    assert env["KANBAN_MODE"] == "production"
    assert (
        env["DATABASE_URL"].startswith("postgres://") and "@postgres:5432/" in env["DATABASE_URL"]
    )
    assert env["REDIS_URL"] == "redis://redis:6379/0"
    assert compose["services"]["migrate"]["environment"] == env
    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "server web:8000" in nginx and "Upgrade $http_upgrade" in nginx


def test_the_proxy_accepts_the_largest_request_the_server_does() -> None:
    """nginx's body cap is the server's own, derived from the document limit: lower and a
    document at its limit is refused by the proxy; higher and the proxy buffers waste."""
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    line, upload = [
        raw.strip() for raw in conf.splitlines() if raw.strip().startswith("client_max_body_size")
    ]
    expected = limits.request_bytes(
        value_bytes=limits.DEFAULT_VALUE_BYTES, document_bytes=limits.DEFAULT_DOCUMENT_BYTES
    )
    assert line == f"client_max_body_size {expected};"
    # The Trello upload's own location takes what its path does behind the proxy.
    assert "location = /imports/trello {" in conf
    trello = DEFAULT_TRELLO_IMPORT_BYTES + MULTIPART_ROOM
    assert upload == f"client_max_body_size {trello};"


def test_the_proxy_sets_the_forwarded_scheme_itself_and_never_passes_a_clients_on() -> None:
    """A client's own ``X-Forwarded-Proto: https`` over plain HTTP would skip the
    production HTTPS redirect (red team, Low 12)."""
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    forwarded = [line.strip() for line in conf.splitlines() if "X-Forwarded-Proto" in line]
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in forwarded
    assert "$http_x_forwarded_proto" not in conf


def test_the_proxy_writes_the_clients_address_itself_and_workers_believe_only_it(
    compose: dict[str, Any],
) -> None:
    """A client's own ``X-Forwarded-For`` would pass for another address and lock its owner
    out: nginx replaces it, and compose names nginx's network as the one proxy."""
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in conf
    assert "$proxy_add_x_forwarded_for" not in conf
    assert compose["x-app-environment"]["KANBAN_TRUSTED_PROXIES"]
    serve = ROOT / "kanban" / "management" / "commands" / "serve.py"
    for launcher in ROOT / "Dockerfile", serve:
        assert "--proxy-headers" not in launcher.read_text(), launcher
