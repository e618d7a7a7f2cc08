"""Shared fixtures. Storage conformance runs on every backend this run can reach: SQLite
always, and PostgreSQL as well when ``DATABASE_URL`` is set."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.db import connections

#: Database aliases that conformance tests run against, named by backend.
BACKEND_ALIASES: dict[str, str] = {}


def pytest_configure(config: pytest.Config) -> None:
    default_vendor = "postgresql" if os.environ.get("DATABASE_URL") else "sqlite"
    BACKEND_ALIASES[default_vendor] = "default"
    if default_vendor != "sqlite":
        extra = {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": settings.BASE_DIR / "var" / "conformance.sqlite3",
            "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 20},
        }
        settings.DATABASES["sqlite"] = extra
        # The handler may already have read DATABASES; give it the alias with its defaults.
        configured = connections.configure_settings({**settings.DATABASES})
        connections.settings["sqlite"] = configured["sqlite"]
        BACKEND_ALIASES["sqlite"] = "sqlite"


def backend_params() -> list[Any]:
    return [pytest.param(alias, id=vendor) for vendor, alias in sorted(BACKEND_ALIASES.items())]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "using" in metafunc.fixturenames:
        metafunc.parametrize("using", backend_params())


@pytest.fixture
def all_databases(request: pytest.FixtureRequest) -> Iterator[None]:
    yield


def close_connections() -> None:
    """Async tests leave thread-bound connections open; Postgres teardown waits on them."""
    for connection in connections.all(initialized_only=True):
        connection.close()
