"""A project's storage usage: its values, kept versions and documents counted in the
write's own transaction, refused past the limit with nothing written. One contract, run on
SQLite and (with DATABASE_URL) PostgreSQL."""

from __future__ import annotations

import io
import threading
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connections

from storage import dump, engine, history, knowledge
from storage.addresses import value
from storage.errors import ErrorCode, KanbanError
from storage.namespaces import dataset_value, project_root
from storage.writes import delete_value, set_value

pytestmark = pytest.mark.django_db(databases="__all__")

PROJECT = uuid.UUID("00000000-0000-4000-8000-0000000000a1")
ROOT = project_root(PROJECT)
BLOB = dataset_value(PROJECT, "kv", "blob")
#: About a megabyte of JSON: the reproduction's PUT.
MEGABYTE = "x" * (2**20 - 2)


def put(using: str, address: Any, data: Any, *, limit: int | None = None, keep: int = 50) -> int:
    write = set_value(address, data, keep=keep, max_bytes=2**21)
    (result,) = engine.commit([write], using=using, max_project_bytes=limit)
    assert result.seq is not None
    return result.seq


def stored_bytes(using: str, root: str = ROOT) -> int:
    """What the project holds, counted the slow way: every value and kept version."""
    high = root[:-1] + "/"
    total = 0
    with engine.driver_cursor(using) as (dialect, cursor):
        p = dialect.placeholder
        for table in ("scalar_values", "value_history"):
            cursor.execute(
                f"SELECT value FROM {table} WHERE namespace >= {p} AND namespace < {p}",
                (root, high),
            )
            total += sum(len(text.encode()) for (text,) in cursor.fetchall() if text)
    return total


def test_values_and_kept_versions_are_counted_exactly(using: str) -> None:
    put(using, BLOB, {"title": "Ship it"})
    put(using, BLOB, "é" * 10)
    put(using, dataset_value(PROJECT, "persistentValue", "p"), [1, 2, 3])
    put(using, dataset_value(PROJECT, "kv", "k", "chat-1"), None, keep=0)
    assert engine.project_bytes(ROOT, using=using) == stored_bytes(using) > 0
    engine.commit([delete_value(BLOB, keep=50)], using=using)
    assert engine.project_bytes(ROOT, using=using) == stored_bytes(using)


def test_repeated_megabyte_writes_are_refused_past_the_limit_and_write_nothing(
    using: str,
) -> None:
    """M4: twenty PUTs of a megabyte to one key kept forty megabytes (value and versions)."""
    limit = 3 * 2**20 + 2**19  # the value and two versions fit; a third version does not
    written = [put(using, BLOB, MEGABYTE + str(n)[:1], limit=limit) for n in range(2)]
    before = engine.project_bytes(ROOT, using=using)
    assert before == stored_bytes(using) <= limit
    with pytest.raises(KanbanError) as excinfo:
        put(using, BLOB, MEGABYTE, limit=limit)
    assert excinfo.value.code == ErrorCode.QUOTA_EXCEEDED
    assert str(limit) in excinfo.value.message
    assert excinfo.value.details["limit"] == limit
    assert engine.get_value(BLOB, using=using).seq == written[-1]  # type: ignore[union-attr]
    assert [v.seq for v in history.read_history(BLOB, using=using)] == written[::-1]
    assert engine.project_bytes(ROOT, using=using) == before == stored_bytes(using)


def test_a_write_that_frees_bytes_passes_even_over_the_limit(using: str) -> None:
    put(using, BLOB, MEGABYTE, keep=1)
    put(using, BLOB, "small", keep=1, limit=100)
    assert engine.project_bytes(ROOT, using=using) == stored_bytes(using) == 2 * len('"small"')


def test_other_projects_and_other_namespaces_are_not_counted_here(using: str) -> None:
    other = uuid.UUID("00000000-0000-4000-8000-0000000000b2")
    put(using, dataset_value(other, "kv", "blob"), MEGABYTE, limit=2 * 2**20 + 100)
    put(using, value("kanban.login.failures", "x"), MEGABYTE, limit=10)
    put(using, BLOB, "mine", limit=100)
    assert engine.project_bytes(ROOT, using=using) == 2 * len('"mine"')


def test_a_deleted_keys_versions_count_until_purged_or_pruned(using: str) -> None:
    put(using, BLOB, MEGABYTE)
    put(using, BLOB, MEGABYTE + "y")
    engine.commit([delete_value(BLOB, keep=50)], using=using)
    assert engine.project_bytes(ROOT, using=using) == stored_bytes(using) > 2 * 2**20
    assert history.purge_history(BLOB, using=using) == 3
    assert history.read_history(BLOB, using=using) == []
    assert engine.project_bytes(ROOT, using=using) == stored_bytes(using) == 0
    assert history.purge_history(BLOB, using=using) == 0


def test_pruning_old_versions_gives_their_bytes_back(using: str) -> None:
    put(using, BLOB, MEGABYTE)
    put(using, dataset_value(PROJECT, "kv", "kept"), "new", keep=0)
    assert history.prune_history(before=datetime.now(UTC) + timedelta(seconds=1), using=using) == 1
    assert engine.project_bytes(ROOT, using=using) == stored_bytes(using)
    assert stored_bytes(using) == len(MEGABYTE) + 2 + len('"new"')


def test_an_erased_project_uses_nothing(using: str) -> None:
    put(using, BLOB, MEGABYTE)
    engine.erase_namespaces(ROOT, using=using)
    assert engine.project_bytes(ROOT, using=using) == 0
    put(using, BLOB, 1)
    assert engine.project_bytes(ROOT, using=using) == stored_bytes(using) == 2


def test_knowledge_documents_count_toward_the_project(using: str, settings: Any) -> None:
    settings.KANBAN_PROJECT_BYTES = 10 * 2**20
    knowledge.knowledge_create(
        project_id=PROJECT, title="Runbook", markdown="# Steps\n" * 100, source={}, using=using
    )
    used = engine.project_bytes(ROOT, using=using)
    assert used == stored_bytes(using) > 800
    settings.KANBAN_PROJECT_BYTES = used + 100
    with pytest.raises(KanbanError) as excinfo:
        knowledge.knowledge_create(
            project_id=PROJECT, title="Big", markdown="y" * 1000, source={}, using=using
        )
    assert excinfo.value.code == ErrorCode.QUOTA_EXCEEDED
    assert engine.project_bytes(ROOT, using=using) == used == stored_bytes(using)


def test_usage_stays_exact_through_a_dump_and_load(using: str) -> None:
    put(using, BLOB, MEGABYTE)
    put(using, BLOB, {"n": 1})
    engine.commit([delete_value(dataset_value(PROJECT, "kv", "blob"), keep=50)], using=using)
    put(using, dataset_value(PROJECT, "persistentValue", "p"), "é")
    used = engine.project_bytes(ROOT, using=using)
    out = io.StringIO()
    dump.dump(out, using=using)
    engine.erase_namespaces(ROOT, using=using)
    put(using, value("app.state", "a"), 1)
    dump.load(io.StringIO(out.getvalue()), replace=True, using=using)
    assert engine.project_bytes(ROOT, using=using) == used == stored_bytes(using)


@pytest.mark.django_db(transaction=True)
def test_writers_racing_in_one_project_never_pass_the_limit() -> None:
    """Eight writers at once, each a megabyte to its own key: the limit holds four. On the
    run's default database, which takes connections from several threads: PostgreSQL's
    writers race; SQLite's (a file) queue for its one write lock."""
    using = "default"
    limit = 4 * (2**20 + 10)
    outcomes: list[str] = []
    barrier = threading.Barrier(8)

    def writer(n: int) -> None:
        try:
            barrier.wait()
            put(using, dataset_value(PROJECT, "kv", f"k{n}"), MEGABYTE, keep=0, limit=limit)
            outcomes.append("written")
        except KanbanError as exc:
            outcomes.append(str(exc.code))
        finally:
            connections[using].close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["quota_exceeded"] * 4 + ["written"] * 4
    assert engine.project_bytes(ROOT, using=using) == stored_bytes(using) <= limit


@pytest.mark.django_db(transaction=True)
def test_writers_racing_on_one_key_keep_its_count_exact() -> None:
    """Four writers set and delete one key (absent at first) at once, values of different
    sizes: what each replaced is measured on the state it changed, so the count is exact."""
    using = "default"
    key = dataset_value(PROJECT, "kv", "contended")

    def writer(n: int) -> None:
        try:
            for i in range(12):
                if i % 5 == 4:
                    engine.commit([delete_value(key, keep=3)], using=using)
                else:
                    put(using, key, "v" * (n * 100 + i), keep=3)
        finally:
            connections[using].close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert engine.project_bytes(ROOT, using=using) == stored_bytes(using) > 0


def test_a_commit_counts_the_file_bytes_it_names_and_is_refused_with_them(using: str) -> None:
    """A project's files (its card attachments) count with their metadata in one commit."""
    put(using, BLOB, {"files": 1})
    values = engine.project_bytes(ROOT, using=using)
    meta = set_value(dataset_value(PROJECT, "kv", "attachments:c1"), {"n": 1}, keep=0)
    engine.commit([meta], using=using, max_project_bytes=10**6, file_bytes={ROOT: 5000})
    used = engine.project_bytes(ROOT, using=using)
    assert used == stored_bytes(using) + 5000 > values + 5000

    with pytest.raises(KanbanError) as refused:
        engine.commit([meta], using=using, max_project_bytes=used + 100, file_bytes={ROOT: 5000})
    assert refused.value.code == ErrorCode.QUOTA_EXCEEDED
    assert engine.project_bytes(ROOT, using=using) == used

    gone = delete_value(dataset_value(PROJECT, "kv", "attachments:c1"), keep=0)
    engine.commit([gone], using=using, file_bytes={ROOT: -5000})
    assert engine.project_bytes(ROOT, using=using) == stored_bytes(using) == values


def test_file_bytes_name_project_roots_only(using: str) -> None:
    with pytest.raises(KanbanError) as refused:
        engine.commit([set_value(BLOB, 1)], using=using, file_bytes={"kanban.login.": 10})
    assert refused.value.code == ErrorCode.INVALID_ARGUMENT


def test_a_load_counts_only_values_and_add_file_bytes_gives_the_files_back(using: str) -> None:
    """A dump carries no files: its recount counts values, and the loader adds the bytes of
    the files it restored (storage never knows what a project's files are)."""
    meta = set_value(dataset_value(PROJECT, "kv", "attachments:c1"), {"n": 1}, keep=0)
    engine.commit([meta], using=using, file_bytes={ROOT: 5000})
    used = engine.project_bytes(ROOT, using=using)
    out = io.StringIO()
    dump.dump(out, using=using)
    dump.load(io.StringIO(out.getvalue()), replace=True, using=using)
    assert engine.project_bytes(ROOT, using=using) == used - 5000

    assert engine.add_file_bytes(ROOT, 5000, using=using) == used
    assert engine.project_bytes(ROOT, using=using) == used
    with pytest.raises(KanbanError) as refused:
        engine.add_file_bytes("kanban.login.", 10, using=using)
    assert refused.value.code == ErrorCode.INVALID_ARGUMENT
