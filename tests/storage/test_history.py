"""Every write keeps the version it made, so the value it replaced stays readable: one
contract, run on SQLite and (with DATABASE_URL) PostgreSQL."""

from __future__ import annotations

import io
import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connections

from storage import dump, engine
from storage import history as versions
from storage.addresses import value
from storage.errors import Conflict, KanbanError
from storage.writes import delete_value, set_value

pytestmark = pytest.mark.django_db(databases="__all__")

CARD = value("p.kv", "card:1")


def put(using: str, data: Any, *, keep: int = 50, **kwargs: Any) -> int:
    (result,) = engine.commit([set_value(CARD, data, keep=keep, **kwargs)], using=using)
    assert result.seq is not None
    return result.seq


def history(using: str, **kwargs: Any) -> list[tuple[int, Any, bool]]:
    return [
        (version.seq, version.value, version.deleted)
        for version in versions.read_history(CARD, using=using, **kwargs)
    ]


def test_each_write_keeps_its_version_newest_first_with_its_source(using: str) -> None:
    first = put(using, {"title": "One"}, source={"user": "alice", "via": "bridge"})
    second = put(using, {"title": "Two"}, source={"user": "agent", "via": "mcp"})
    assert history(using) == [(second, {"title": "Two"}, False), (first, {"title": "One"}, False)]
    newest = versions.read_history(CARD, using=using)[0]
    assert newest.source == {"user": "agent", "via": "mcp"}
    assert newest.written_at.tzinfo is not None


def test_a_write_without_keep_keeps_nothing(using: str) -> None:
    put(using, 1, keep=0)
    assert history(using) == []


def test_a_delete_keeps_a_tombstone_with_who_deleted(using: str) -> None:
    kept = put(using, "before")
    (deleted,) = engine.commit([delete_value(CARD, source={"user": "bob"}, keep=50)], using=using)
    assert deleted.seq is not None
    assert history(using) == [(deleted.seq, None, True), (kept, "before", False)]
    assert versions.read_history(CARD, using=using)[0].source == {"user": "bob"}
    again = put(using, "after")
    assert [seq for seq, _, _ in history(using)] == [again, deleted.seq, kept]


def test_retention_keeps_the_newest_revisions_of_each_key_only(using: str) -> None:
    seqs = [put(using, n, keep=5) for n in range(12)]
    assert [seq for seq, _, _ in history(using, limit=100)] == seqs[::-1][:5]
    other = value("p.kv", "card:2")
    engine.commit([set_value(other, "x", keep=5)], using=using)
    assert len(versions.read_history(other, using=using)) == 1, "per key"
    assert len(history(using, limit=100)) == 5


def test_a_conflicting_compare_and_set_keeps_nothing_and_a_good_one_keeps_its_version(
    using: str,
) -> None:
    first = put(using, 1)
    with pytest.raises(Conflict):
        put(using, 2, expected_seq=first + 1000)
    with pytest.raises(Conflict):
        put(using, 2, expected_seq=None)
    assert history(using) == [(first, 1, False)]
    second = put(using, 3, expected_seq=first)
    fresh = value("p.kv", "card:new")
    (created,) = engine.commit([set_value(fresh, "n", expected_seq=None, keep=50)], using=using)
    assert history(using) == [(second, 3, False), (first, 1, False)]
    assert [v.seq for v in versions.read_history(fresh, using=using)] == [created.seq]


def test_history_pages_with_a_cursor_and_ages_out(using: str) -> None:
    seqs = [put(using, n) for n in range(5)]
    page = history(using, limit=2)
    assert [seq for seq, _, _ in page] == [seqs[4], seqs[3]]
    rest = history(using, before=page[-1][0], limit=10)
    assert [seq for seq, _, _ in rest] == [seqs[2], seqs[1], seqs[0]]
    tomorrow = datetime.now(UTC) + timedelta(days=1)
    assert history(using, since=tomorrow) == []
    assert versions.prune_history(before=tomorrow, using=using) == 5
    assert history(using) == []


def test_a_rolled_back_write_keeps_no_version(using: str) -> None:
    from django.db import transaction

    put(using, "kept")
    with pytest.raises(RuntimeError), transaction.atomic(using=using):
        engine.commit([set_value(CARD, "gone", keep=50)], using=using)
        raise RuntimeError("roll back")
    assert [v for _, v, _ in history(using)] == ["kept"]


def test_bad_history_arguments_are_invalid(using: str) -> None:
    for kwargs in ({"before": 0}, {"before": "1"}, {"limit": 0}):
        with pytest.raises(KanbanError):
            versions.read_history(CARD, using=using, **kwargs)


def test_dump_and_load_carry_the_history_exactly(using: str) -> None:
    kept = [put(using, {"n": n}, source={"user": "alice"}) for n in range(3)]
    (deleted,) = engine.commit([delete_value(CARD, keep=50)], using=using)
    before = versions.read_history(CARD, using=using)
    out = io.StringIO()
    dump.dump(out, using=using)
    lines = [json.loads(line) for line in out.getvalue().splitlines()[1:]]
    assert sorted(r["seq"] for r in lines if r["kind"] == "history") == [*kept, deleted.seq]
    dump.load(io.StringIO(out.getvalue()), replace=True, using=using)
    assert versions.read_history(CARD, using=using) == before


@pytest.mark.django_db(transaction=True, databases="__all__")
def test_writers_racing_on_one_key_each_keep_their_own_version(using: str) -> None:
    """Every committed write is in the history once, whoever won the row lock first."""
    if connections[using].vendor == "sqlite":
        pytest.skip("SQLite has one writer at a time; the race is PostgreSQL's")
    written: list[int] = []
    lock = threading.Lock()

    def writer(n: int) -> None:
        try:
            for i in range(10):
                seq = put(using, f"{n}-{i}", keep=100)
                with lock:
                    written.append(seq)
        finally:
            connections[using].close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    kept = [seq for seq, _, _ in history(using, limit=100)]
    assert sorted(kept) == sorted(written) and len(kept) == 40
