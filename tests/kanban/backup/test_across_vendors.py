"""A SQLite evaluation moved to PostgreSQL, and back: the archive made by ``manage.py
backup`` on one vendor is restored on the other. Needs PostgreSQL (``DATABASE_URL``); the
source deployment is a real one, made by manage.py in its own process and database."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connections
from django.test import Client

from kanban.backup.archive import backup_restore, backup_verify
from kanban.data.attachments import attachment_list
from kanban.models import Project
from tests.kanban.backup.test_archive import COMMENT, kv_url
from tests.kanban.backup.test_attachment_files import files_in, folder

pytestmark = [
    pytest.mark.skipif(
        not os.environ.get("DATABASE_URL"), reason="moving across vendors needs PostgreSQL"
    ),
    pytest.mark.django_db(transaction=True, databases=["default", "sqlite"]),
]

#: What the source deployment's alice does before its backup: a comment, an edit and a
#: picture on the card.
ALICE_MOVES_IN = f"""
import io
from PIL import Image
from django.contrib.auth.models import User
from kanban.data.attachments import attachment_upload
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from kanban.models import Project
alice, board = User.objects.get(username="alice"), Project.objects.get(name="Board")
def put(key, value):
    project_kv_set(target=Target(user=alice, project_id=board.id), key=key, value=value,
                   provenance=Provenance(via="cli"))
put("comments:c1", [{COMMENT!r}])
put("card:c1", {{"id": "c1", "title": "Write the move-in plan", "column": "todo"}})
picture = io.BytesIO()
Image.new("RGB", (64, 48), (30, 90, 200)).save(picture, format="PNG")
picture.seek(0)
attachment_upload(user=alice, project_id=board.id, card="c1", name="floor-plan.png",
                  content_type="image/png", stream=picture)
"""


def manage(env: dict[str, str], *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *argv],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def deployment_env(database_url: str, files: Path) -> dict[str, str]:
    """Another deployment's: its database and its attachments folder."""
    env = {key: value for key, value in os.environ.items() if key != "KANBAN_SQLITE_PATH"}
    env.update(
        DATABASE_URL=database_url,
        KANBAN_FAST_PASSWORD_HASHING="1",
        KANBAN_ATTACHMENTS_DIR=str(files),
    )
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return env


def a_deployment_backed_up(env: dict[str, str], archive: Path) -> str:
    """Migrate, load the demo, let alice comment, edit and attach a picture, back up; alice's
    password."""
    manage(env, "migrate", "--verbosity", "0")
    logins = manage(env, "demo_data")
    manage(env, "shell", "--command", ALICE_MOVES_IN)
    manage(env, "backup", str(archive))
    found = re.search(r"^\s+alice\s+(\S+)", logins, re.MULTILINE)
    assert found, logins
    return found.group(1)


@pytest.fixture
def postgres_source() -> Iterator[str]:
    """A PostgreSQL database of this test's own, dropped afterwards."""
    params = connections["default"].get_connection_params()
    name = f"kanban_backup_test_{os.getpid()}"
    admin = {key: params[key] for key in ("host", "port", "user", "password") if params.get(key)}
    with psycopg.connect(dbname="postgres", autocommit=True, **admin) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    auth = admin["user"] + (f":{admin['password']}" if admin.get("password") else "")
    yield f"postgres://{auth}@{admin.get('host', '127.0.0.1')}:{admin.get('port', 5432)}/{name}"
    with psycopg.connect(dbname="postgres", autocommit=True, **admin) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_sqlite_evaluation_moves_to_postgresql_and_alice_finds_her_board(
    tmp_path: Path, settings: Any
) -> None:
    archive = tmp_path / "evaluation.zip"
    env = deployment_env(
        f"sqlite:///{tmp_path / 'evaluation.sqlite3'}", tmp_path / "source-attachments"
    )
    password = a_deployment_backed_up(env, archive)
    there = folder(settings, tmp_path / "there")

    call_command("restore", str(archive), "--verify")

    assert connections["default"].vendor == "postgresql"
    alice = Client()
    assert alice.login(username="alice", password=password)
    board = Project.objects.get(name="Board")
    assert alice.get(kv_url(board, "card:c1")).json()["value"]["title"] == (
        "Write the move-in plan"
    )
    assert alice.get(kv_url(board, "comments:c1")).json()["value"] == [COMMENT]
    history = alice.get(kv_url(board, "card:c1", history=True)).json()["entries"]
    assert [entry["value"]["title"] for entry in history] == [
        "Write the move-in plan",
        "Write the onboarding guide",
    ]
    (picture,) = attachment_list(
        user=User.objects.get(username="alice"), project_id=board.id, card="c1"
    )
    assert picture["name"] == "floor-plan.png" and len(files_in(there)) == 2, (
        "the file and its cover"
    )
    downloaded = alice.get(picture["url"])
    assert downloaded.status_code == 200
    assert b"".join(downloaded.streaming_content).startswith(b"\x89PNG")  # type: ignore[attr-defined]


def test_a_postgresql_deployment_moves_back_to_sqlite(tmp_path: Path, postgres_source: str) -> None:
    archive = tmp_path / "deployment.zip"
    password = a_deployment_backed_up(
        deployment_env(postgres_source, tmp_path / "source-attachments"), archive
    )

    manifest = backup_restore(path=archive, using="sqlite")

    assert manifest["source"]["vendor"] == "postgresql"
    assert all(check.agrees for check in backup_verify(path=archive, using="sqlite"))
    assert User.objects.db_manager("sqlite").get(username="alice").check_password(password)
    assert Project.objects.using("sqlite").filter(name="Board").exists()
