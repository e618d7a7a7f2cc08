"""Shared fixtures. Storage conformance runs on every backend this run can reach: SQLite
always, and PostgreSQL as well when ``DATABASE_URL`` is set."""

from __future__ import annotations

import asyncio
import collections
import inspect
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import hashers
from django.db import connections

from kanban.quotas import deployment as quotas
from storage import aio
from tests.browser.fixtures import browser, chromium, new_context
from tests.live import STARTS, LiveServer, start_live_servers

# The suite starts dozens of Python processes (xdist workers, daphne workers, manage.py):
# where the environment says PYTHONDONTWRITEBYTECODE, each compiled every module, and
# pytest rewrote every test module, again. Here they are compiled once and kept (the
# folders are ignored by git); the processes this one starts inherit it.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

#: Chromium fixtures (tests/browser/fixtures.py): one browser for every directory.
__all__ = ["browser", "chromium", "new_context"]

#: Database aliases that conformance tests run against, named by backend.
BACKEND_ALIASES: dict[str, str] = {}


#: What tests check is who may sign in, not what a password costs to hash: half a second
#: of PBKDF2 per demo user and per login was minutes of the suite. Workers get the same
#: setting (tests/live.py worker_env), so they check what this process hashed.
FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def pytest_configure(config: pytest.Config) -> None:
    isolate_parallel_worker()
    settings.PASSWORD_HASHERS = FAST_HASHERS
    hashers.get_hashers.cache_clear()
    hashers.get_hashers_by_algorithm.cache_clear()
    default_vendor = "postgresql" if os.environ.get("DATABASE_URL") else "sqlite"
    BACKEND_ALIASES[default_vendor] = "default"
    if default_vendor == "sqlite":
        use_file_for_sqlite_test_database()
    else:
        extra = {
            "ENGINE": "storage.sqlite_backend",
            "NAME": settings.BASE_DIR / "var" / "conformance.sqlite3",
            "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 20},
        }
        settings.DATABASES["sqlite"] = extra
        # The handler may already have read DATABASES; give it the alias with its defaults.
        configured = connections.configure_settings({**settings.DATABASES})
        connections.settings["sqlite"] = configured["sqlite"]
        BACKEND_ALIASES["sqlite"] = "sqlite"


def isolate_parallel_worker() -> None:
    """Under pytest-xdist (``-n 3``) each worker has its own test databases (pytest-django
    suffixes them) but would share Redis: the same project ids in two workers' databases
    would meet in one channel group. Each worker gets its own key prefix, and so do the
    daphne workers it starts (they read it from the environment, tests/live.py)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    prefix = f"{settings.KANBAN_REDIS_PREFIX}-{worker}"
    os.environ["KANBAN_REDIS_PREFIX"] = prefix
    settings.KANBAN_REDIS_PREFIX = prefix
    layer = settings.CHANNEL_LAYERS["default"]
    if "prefix" in layer.get("CONFIG", {}):
        layer["CONFIG"]["prefix"] = prefix
    cache = settings.CACHES["default"]
    if "KEY_PREFIX" in cache:
        cache["KEY_PREFIX"] = f"{prefix}:cache"


def backend_params() -> list[Any]:
    return [pytest.param(alias, id=vendor) for vendor, alias in sorted(BACKEND_ALIASES.items())]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "using" in metafunc.fixturenames:
        metafunc.parametrize("using", backend_params())


def close_connections() -> None:
    """Async tests leave thread-bound connections open; Postgres teardown waits on them."""
    for connection in connections.all(initialized_only=True):
        connection.close()


# --- live servers (tests/live.py) -----------------------------------------------------------
#
# Daphne workers run in subprocesses against this run's test database, so the test database
# must be one another process can open, and data must be committed before a worker sees it:
# every test that starts a worker is transactional (``django_db(transaction=True)``; the
# fixtures below request ``transactional_db`` themselves).


def use_file_for_sqlite_test_database() -> None:
    """An in-memory SQLite test database lives in this process only; live servers need a file.

    One file per pytest process (``var/test-<pid>.sqlite3``) so parallel runs do not clobber
    each other; pytest-django creates and destroys it. ``KANBAN_SQLITE_TEST_PATH`` overrides.
    """
    test_settings = settings.DATABASES["default"].setdefault("TEST", {})
    if test_settings.get("NAME"):
        return
    path = Path(settings.BASE_DIR) / "var" / f"test-{os.getpid()}.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    test_settings["NAME"] = str(path)
    # The connection handler may hold its own copy of the settings already.
    connections.settings["default"].setdefault("TEST", {})["NAME"] = str(path)
    SQLITE_TEST_FILES.append(path)


#: Test database files this run chose (and so cleans up after).
SQLITE_TEST_FILES: list[Path] = []


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``long`` run first. xdist hands tests out in collection order, and a test
    of a minute collected last runs alone at the end of the pass while the other workers
    idle; started first, it runs beside the short ones."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


#: Live-server starts reported by the xdist workers, summed in the controller.
WORKER_STARTS: collections.Counter[str] = collections.Counter()


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["live_server_starts"] = dict(STARTS)


def pytest_testnodedown(node: Any, error: Any) -> None:
    WORKER_STARTS.update(getattr(node, "workeroutput", {}).get("live_server_starts", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """How many daphne workers this pass started: the cost the fixtures are judged by."""
    starts = WORKER_STARTS + STARTS
    terminalreporter.write_line(
        f"live-server starts: {sum(starts.values())} "
        f"({starts['forked']} forked by the zygote, {starts['cold']} cold)"
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    """Django removes the SQLite test file; its WAL side files are ours to remove."""
    for path in SQLITE_TEST_FILES:
        for suffix in ("-wal", "-shm", "-journal"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)


@pytest.fixture(autouse=True)
def _fresh_write_budgets() -> None:
    """A person's write-bytes budget is kept per process (kanban/quotas/deployment.py), and the
    SQLite runs give each test's alice the same id: one test's writes must not spend the
    next one's budget."""
    quotas.write_bytes_reset()


@pytest.fixture(autouse=True)
def _attachments_in_a_temporary_folder(settings: Any, tmp_path_factory: Any) -> None:
    """Files attached during a test go to a folder of the run's own, never var/attachments."""
    folder = tmp_path_factory.mktemp("attachments")
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(folder)},
        },
    }


@pytest.fixture(autouse=True)
def _live_server_helper() -> None:
    """Replaces pytest-django's helper of this name, which drives pytest-django's own threaded
    WSGI ``live_server``. Ours (below) is daphne in subprocesses and needs no settings changes;
    pytest-django still treats any test using a fixture named ``live_server`` as transactional.
    """


@pytest.fixture
def live_servers(transactional_db: None) -> Iterator[Callable[..., list[LiveServer]]]:
    """``live_servers(count=1, env=None)`` starts ``count`` daphne workers on the test
    database (and Redis when ``REDIS_URL`` is set), ready to serve; stopped after the test.

    A worker's output is printed at teardown, so pytest shows it when the test fails.
    """
    started: list[LiveServer] = []

    def start(count: int = 1, *, env: Mapping[str, str] | None = None) -> list[LiveServer]:
        servers = start_live_servers(count, env=env)
        started.extend(servers)
        return servers

    yield start
    for server in started:
        code = server.stop()
        said = server.output(access_log=False)
        print(f"--- {server!r} exit code {code}; output less its access log:\n{said}")
        server.remove_log()


@pytest.fixture
def live_server(live_servers: Callable[..., list[LiveServer]]) -> LiveServer:
    """One daphne worker on the test database: ``.url``, ``.ws_url``, ``.pid``, ``.stop()``,
    ``.kill()``. Function-scoped; the test is transactional (see ``live_servers``)."""
    (server,) = live_servers(1)
    return server


def _django_db_arguments(
    transaction: bool = False,
    reset_sequences: bool = False,
    databases: Any = None,
    *args: Any,
    **kwargs: Any,
) -> tuple[bool, Any]:
    """Reads ``django_db``'s arguments the way pytest-django's signature takes them."""
    return transaction or reset_sequences, databases


def transactional_aliases(request: pytest.FixtureRequest) -> tuple[str, ...]:
    """Database aliases a transactional test committed to; empty for any other test."""
    marker = request.node.get_closest_marker("django_db")
    transactional, databases = (
        _django_db_arguments(*marker.args, **marker.kwargs) if marker else (False, None)
    )
    transactional = transactional or any(
        name in request.fixturenames
        for name in ("transactional_db", "django_db_reset_sequences", "live_server")
    )
    if not transactional:
        return ()
    if databases is None:
        return ("default",)
    if databases == "__all__":
        return tuple(connections)
    return tuple(databases)


@pytest.fixture(autouse=True)
def _clear_storage_after_transactional_tests(
    request: pytest.FixtureRequest, django_db_blocker: Any
) -> Iterator[None]:
    """pytest-django's flush empties model tables only; the storage tables are raw SQL
    (kept versions too: a board's next test must not find the last one's history).
    The global sequence is left alone: it only has to keep increasing."""
    aliases = transactional_aliases(request)
    yield
    if not aliases:
        return
    with django_db_blocker.unblock():
        for alias in aliases:
            with connections[alias].cursor() as cursor:
                cursor.execute("DELETE FROM list_values")
                cursor.execute("DELETE FROM scalar_values")
                cursor.execute("DELETE FROM value_history")
                cursor.execute("DELETE FROM storage_usage")


# --- async tests -----------------------------------------------------------------------------


def close_connections_everywhere() -> None:
    """Close this thread's connections and those of asgiref's shared sync thread.

    Under pytest-asyncio the loop runs in this thread without an outer ``async_to_sync``,
    so ``sync_to_async`` (and channels' ``database_sync_to_async``) run ORM calls in one
    shared executor thread whose connections ``close_connections()`` here cannot see. A
    ``sync_to_async`` call from a fresh loop lands on that same thread.
    """
    close_connections()
    asyncio.run(sync_to_async(close_connections)())


@pytest.fixture(autouse=True)
def _close_connections_after_async_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if inspect.iscoroutinefunction(getattr(request.node, "function", None)):
        close_connections_everywhere()
    # Reads on the event loop (storage/aio.py) pool connections per loop; a test's loop,
    # or one async_to_sync made, has ended by now.
    aio.close_abandoned()


# --- channel layer -----------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _in_process_channel_layer(request: pytest.FixtureRequest) -> None:
    """Async tests, whose consumers run in this process, use the in-memory layer.

    A channels_redis layer binds its receive state to the event loop it first ran on, and
    every async test has its own loop: a hub receive left behind at a loop's teardown could
    stall pytest-asyncio's task cancellation. Cross-process behaviour is tested against real
    daphne workers, which take REDIS_URL from their environment; tests that publish through
    Redis from this process ask for it explicitly (``redis_layer`` in test_scale_out.py).
    """
    if not inspect.iscoroutinefunction(getattr(request.node, "function", None)):
        return  # sync tests run no consumer here; they may publish to workers through Redis
    settings = request.getfixturevalue("settings")
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
