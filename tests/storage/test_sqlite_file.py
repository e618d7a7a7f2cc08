"""Seed 002: a fresh SQLite database file is its owner's alone."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db.utils import load_backend

from kanban.environment import database_from_url


@pytest.fixture(autouse=True)
def _own_connections(django_db_blocker: Any) -> Iterator[None]:
    """These tests open their own database files, outside the test database."""
    with django_db_blocker.unblock():
        yield


def connect(path: Path) -> None:
    settings = database_from_url(f"sqlite:///{path}")
    backend = load_backend(settings["ENGINE"])
    wrapper = backend.DatabaseWrapper(
        {
            **settings,
            "TIME_ZONE": None,
            "CONN_HEALTH_CHECKS": False,
            "CONN_MAX_AGE": 0,
            "AUTOCOMMIT": True,
            "ATOMIC_REQUESTS": False,
            "TEST": {},
        },
        "fresh",
    )
    wrapper.ensure_connection()
    with wrapper.cursor() as cursor:
        cursor.execute("CREATE TABLE t (x)")
        cursor.execute("INSERT INTO t VALUES (1)")
    wrapper.close()


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_fresh_database_file_and_its_journals_are_owner_only(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual umask, which would give 0o644
    try:
        connect(tmp_path / "data" / "boards.sqlite3")
    finally:
        os.umask(old)
    assert mode_of(tmp_path / "data" / "boards.sqlite3") == 0o600
    for journal in tmp_path.glob("data/boards.sqlite3-*"):
        assert mode_of(journal) & 0o077 == 0, journal


def test_an_existing_file_keeps_the_mode_its_operator_gave_it(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    path.touch(mode=0o640)
    path.chmod(0o640)
    connect(path)
    assert mode_of(path) == 0o640
