"""One contract, every backend: each test runs on SQLite and (with DATABASE_URL) PostgreSQL."""

from __future__ import annotations

import contextlib
import io
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connections, transaction

from storage import dump, engine, events
from storage.addresses import value, value_list
from storage.backends import dialect_for
from storage.errors import Conflict, ErrorCode, KanbanError
from storage.writes import append_list, delete_list, delete_value, set_value

pytestmark = pytest.mark.django_db(databases="__all__")


@pytest.fixture
def published() -> Iterator[list[events.Change]]:
    seen: list[events.Change] = []
    remove = events.CHANGES.listen(seen.extend)
    yield seen
    remove()


@pytest.fixture
def committing(
    django_capture_on_commit_callbacks: Callable[..., Any], using: str
) -> Callable[..., Any]:
    """Run the block so that its on_commit callbacks fire as if the test had committed."""
    return lambda: django_capture_on_commit_callbacks(using=using, execute=True)


def put(using: str, address: Any, data: Any, **kwargs: Any) -> int:
    (result,) = engine.commit([set_value(address, data, **kwargs)], using=using)
    assert result.seq is not None
    return result.seq


def error_code(excinfo: pytest.ExceptionInfo[KanbanError]) -> str:
    return str(excinfo.value.code)


# --- addresses -----------------------------------------------------------------------------


def test_addresses_are_frozen_hashable_and_equal_by_value() -> None:
    assert value("app.state", "a") == value("app.state", "a")
    assert len({value("app.state", "a"), value("app.state", "a")}) == 1
    assert value("app.state", "a") != value_list("app.state", "a")
    with pytest.raises(AttributeError):
        value("app.state").key = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("namespace", "key"),
    [("", "k"), ("ns\x00", "k"), ("ns", "k\x00"), ("ns", "\ud800"), (3, "k"), ("ns", None)],
)
def test_bad_addresses_are_refused_with_invalid_argument(namespace: Any, key: Any) -> None:
    with pytest.raises(KanbanError) as excinfo:
        value(namespace, key)
    assert error_code(excinfo) == ErrorCode.INVALID_ARGUMENT
    with pytest.raises(KanbanError):
        value_list(namespace, key)


def test_empty_key_is_legal() -> None:
    assert value("app.state").key == ""


# --- values --------------------------------------------------------------------------------


ROUND_TRIPS = [
    0,
    1,
    -(2**62),
    2**80,
    1.0,
    0.1,
    -2.5e-300,
    "",
    "héllo ✓ 𝄞",
    "a\x00b",
    True,
    False,
    None,
    [],
    {},
    [1, [2, [3, {"x": None}]]],
    {"z": 1, "a": 2, "m": {"b": [1.5, "s"]}},
]


@pytest.mark.parametrize("data", ROUND_TRIPS, ids=repr)
def test_json_values_round_trip_exactly(using: str, data: Any) -> None:
    address = value("app.state", "v")
    put(using, address, data)
    stored = engine.get_value(address, using=using)
    assert stored is not None
    assert stored.value == data
    assert type(stored.value) is type(data)
    if isinstance(data, dict):
        assert list(stored.value) == list(data), "object key order is kept"


def test_a_stored_null_is_a_value_not_absence(using: str) -> None:
    address = value("app.state", "nothing")
    assert engine.get_value(address, using=using) is None
    put(using, address, None)
    stored = engine.get_value(address, using=using)
    assert stored is not None and stored.value is None


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, {1: "x"}, {"a": {1, 2}}, b"x"])
def test_non_json_values_are_refused_and_nothing_is_written(using: str, bad: Any) -> None:
    address = value("app.state", "bad")
    with pytest.raises(KanbanError) as excinfo:
        engine.commit([set_value(address, bad)], using=using)
    assert error_code(excinfo) == ErrorCode.INVALID_ARGUMENT
    assert engine.get_value(address, using=using) is None


def test_every_write_gets_a_new_strictly_increasing_seq(using: str) -> None:
    a, b = value("app.state", "a"), value("app.state", "b")
    seqs = [put(using, a, 1), put(using, b, 1), put(using, a, 2)]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3
    stored = engine.get_value(a, using=using)
    assert stored is not None and stored.seq == seqs[2]


def test_writes_in_one_transaction_each_get_their_own_seq_in_order(using: str) -> None:
    results = engine.commit(
        [
            append_list(value_list("app.events", "x"), "A"),
            set_value(value("app.state", "x"), "X"),
            append_list(value_list("app.events", "x"), "B"),
        ],
        using=using,
    )
    seqs = [r.seq for r in results]
    assert all(s is not None for s in seqs)
    assert seqs == sorted(seqs) and len(set(seqs)) == 3  # type: ignore[type-var]
    page = engine.read_list(value_list("app.events", "x"), using=using)
    assert [e.value for e in page] == ["A", "B"]


def test_source_and_written_at_are_recorded(using: str) -> None:
    address = value("app.state", "src")
    put(using, address, 1, source={"via": "api", "user": "alice"})
    stored = engine.get_value(address, using=using)
    assert stored is not None
    assert stored.source == {"via": "api", "user": "alice"}
    assert stored.written_at.tzinfo is not None


def test_the_last_write_is_read_without_the_value(using: str) -> None:
    address = value("app.state", "big")
    seq = put(using, address, {"text": "x" * 1000}, source={"user": "alice", "via": "api"})
    with engine.recording_reads() as reads:
        last = engine.get_last_write(address, using=using)
    assert last is not None
    assert (last.seq, last.source) == (seq, {"user": "alice", "via": "api"})
    stored = engine.get_value(address, using=using)
    assert stored is not None and last.written_at == stored.written_at
    assert [read.op for read in reads] == ["last_write"]
    assert engine.get_last_write(value("app.state", "absent"), using=using) is None


def test_delete_reports_whether_something_was_removed(using: str) -> None:
    address = value("app.state", "d")
    (missing,) = engine.commit([delete_value(address)], using=using)
    assert missing.seq is None and not missing.applied
    put(using, address, "here")
    (removed,) = engine.commit([delete_value(address)], using=using)
    assert removed.applied
    assert engine.get_value(address, using=using) is None


def test_many_values_are_read_in_one_call_in_the_order_asked(using: str) -> None:
    seqs = {key: put(using, value("app.batch", key), {"n": n}) for n, key in enumerate("abc")}
    put(using, value("app.other", "a"), "another namespace")
    asked = [value("app.batch", k) for k in ("c", "missing", "a", "c")]

    found = engine.get_values(asked, using=using)

    assert [None if f is None else (f.address.key, f.value, f.seq) for f in found] == [
        ("c", {"n": 2}, seqs["c"]),
        None,
        ("a", {"n": 0}, seqs["a"]),
        ("c", {"n": 2}, seqs["c"]),
    ]
    assert engine.get_values([], using=using) == []


def test_a_batched_read_stays_in_one_namespace(using: str) -> None:
    with pytest.raises(KanbanError) as caught:
        engine.get_values([value("app.a", "k"), value("app.b", "k")], using=using)
    assert error_code(caught) == "invalid_argument"


class _CountingCursor:
    def __init__(self, cursor: Any, statements: list[str]) -> None:
        self._cursor, self._statements = cursor, statements

    def execute(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        self._statements.append(sql)
        return self._cursor.execute(sql, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def test_a_batched_read_of_many_keys_is_one_statement(
    using: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = [f"card:{n:04d}" for n in range(1000)]
    engine.commit([set_value(value("app.board", k), n) for n, k in enumerate(keys)], using=using)
    statements: list[str] = []
    real = engine.driver_cursor

    @contextlib.contextmanager
    def counting(alias: str) -> Iterator[tuple[Any, Any]]:
        with real(alias) as (dialect, cursor):
            yield dialect, _CountingCursor(cursor, statements)

    monkeypatch.setattr(engine, "driver_cursor", counting)
    with engine.recording_reads() as reads:
        found = engine.get_values([value("app.board", k) for k in keys], using=using)
    assert [f.value for f in found if f is not None] == list(range(1000))
    assert len(reads) == 1000 and len(statements) == 1


def test_erasing_a_namespace_root_takes_everything_under_it_and_nothing_else(using: str) -> None:
    for namespace in ("fam.a.kv", "fam.a.kv.conversation.x", "fam.a", "fam.ab.kv", "fam.b.kv"):
        put(using, value(namespace, "k"), namespace)
    engine.commit([append_list(value_list("fam.a.log", "l"), 1)], using=using)

    removed = engine.erase_namespaces("fam.a.", using=using)

    assert removed == 3
    left = [
        ns
        for ns in ("fam.a.kv", "fam.a.kv.conversation.x", "fam.a", "fam.ab.kv", "fam.b.kv")
        if engine.get_value(value(ns, "k"), using=using) is not None
    ]
    assert left == ["fam.a", "fam.ab.kv", "fam.b.kv"]
    assert engine.read_list(value_list("fam.a.log", "l"), using=using) == []
    with pytest.raises(KanbanError):
        engine.erase_namespaces("fam.a", using=using)


def test_the_latest_write_under_a_namespace_root_is_the_newest_of_the_family_only(
    using: str,
) -> None:
    assert engine.latest_write("fam.a.", using=using) is None
    put(using, value("fam.a.kv", "old"), 1, source={"user": "alice"})
    newest = put(using, value("fam.a.kv.conversation.x", "k"), 2, source={"user": "bob"})
    put(using, value("fam.a", "k"), 3, source={"user": "carol"})  # not under "fam.a."
    put(using, value("fam.ab.kv", "k"), 4, source={"user": "dave"})

    latest = engine.latest_write("fam.a.", using=using)

    assert latest is not None
    assert (latest.seq, latest.source) == (newest, {"user": "bob"})
    assert latest.written_at.tzinfo is not None
    with pytest.raises(KanbanError):
        engine.latest_write("fam.a", using=using)


# --- compare-and-set -----------------------------------------------------------------------


def test_cas_absent_creates_once_then_conflicts(using: str) -> None:
    address = value("app.state", "cas")
    seq = put(using, address, 1, expected_seq=None)
    with pytest.raises(Conflict) as excinfo:
        put(using, address, 2, expected_seq=None)
    assert excinfo.value.code == ErrorCode.CONFLICT
    assert excinfo.value.current_seq == seq
    stored = engine.get_value(address, using=using)
    assert stored is not None and stored.value == 1


def test_cas_on_the_current_seq_succeeds_and_a_stale_seq_conflicts(using: str) -> None:
    address = value("app.state", "cas")
    first = put(using, address, "v1")
    second = put(using, address, "v2", expected_seq=first)
    assert second > first
    with pytest.raises(Conflict) as excinfo:
        put(using, address, "v3", expected_seq=first)
    assert excinfo.value.current_seq == second
    stored = engine.get_value(address, using=using)
    assert stored is not None and (stored.value, stored.seq) == ("v2", second)


def test_cas_on_a_missing_value_conflicts_with_no_current_seq(using: str) -> None:
    with pytest.raises(Conflict) as excinfo:
        put(using, value("app.state", "never"), 1, expected_seq=12345)
    assert excinfo.value.current_seq is None


@pytest.mark.parametrize("bad", [0, -1, 1.5, "3", True])
def test_cas_seq_must_be_a_positive_integer(bad: Any) -> None:
    with pytest.raises(KanbanError) as excinfo:
        set_value(value("app.state", "x"), 1, expected_seq=bad)
    assert error_code(excinfo) == ErrorCode.INVALID_ARGUMENT


# --- atomicity -----------------------------------------------------------------------------


def test_a_transaction_mixing_all_four_write_kinds_that_fails_midway_applies_nothing(
    using: str,
) -> None:
    kept = value("app.state", "kept")
    doomed = value("app.state", "doomed")
    events_list = value_list("app.events", "mixed")
    old_list = value_list("app.events", "old")
    kept_seq = put(using, kept, "before")
    engine.commit([append_list(old_list, "old-1")], using=using)
    with pytest.raises(Conflict):
        engine.commit(
            [
                set_value(doomed, "new"),
                append_list(events_list, "e1"),
                delete_value(kept),
                delete_list(old_list),
                set_value(kept, "after", expected_seq=kept_seq + 1000),
            ],
            using=using,
        )
    assert engine.get_value(doomed, using=using) is None
    assert engine.read_list(events_list, using=using) == []
    still = engine.get_value(kept, using=using)
    assert still is not None and (still.value, still.seq) == ("before", kept_seq)
    assert [e.value for e in engine.read_list(old_list, using=using)] == ["old-1"]


def test_a_transaction_mixing_all_four_write_kinds_commits_together(using: str) -> None:
    kept, gone = value("app.state", "kept"), value("app.state", "gone")
    fresh, old = value_list("app.events", "fresh"), value_list("app.events", "old")
    put(using, gone, 1)
    engine.commit([append_list(old, 1)], using=using)
    results = engine.commit(
        [set_value(kept, 1), delete_value(gone), append_list(fresh, 1), delete_list(old)],
        using=using,
    )
    assert all(r.applied for r in results)
    assert engine.get_value(gone, using=using) is None
    assert engine.read_list(old, using=using) == []
    assert len(engine.read_list(fresh, using=using)) == 1


# --- lists ---------------------------------------------------------------------------------


@pytest.fixture
def five_elements(using: str) -> tuple[Any, list[int]]:
    address = value_list("app.events", "paged")
    noise = value_list("app.events", "noise")
    seqs = []
    for n in range(5):
        engine.commit([append_list(noise, n)], using=using)  # gaps from unrelated writes
        (result,) = engine.commit([append_list(address, n)], using=using)
        seqs.append(result.seq)
    return address, seqs


def test_list_pages_ascending_with_an_exclusive_cursor(
    using: str, five_elements: tuple[Any, list[int]]
) -> None:
    address, seqs = five_elements
    first = engine.read_list(address, limit=2, using=using)
    assert [e.value for e in first] == [0, 1]
    second = engine.read_list(address, cursor=first[-1].seq, limit=2, using=using)
    assert [e.value for e in second] == [2, 3]
    third = engine.read_list(address, cursor=second[-1].seq, limit=2, using=using)
    assert [e.value for e in third] == [4]
    assert engine.read_list(address, cursor=third[-1].seq, limit=2, using=using) == []
    assert [e.seq for e in first + second + third] == seqs


def test_list_pages_descending_apply_order_before_limit(
    using: str, five_elements: tuple[Any, list[int]]
) -> None:
    address, seqs = five_elements
    newest = engine.read_list(address, order="desc", limit=2, using=using)
    assert [e.value for e in newest] == [4, 3]
    older = engine.read_list(address, cursor=newest[-1].seq, order="desc", limit=10, using=using)
    assert [e.value for e in older] == [2, 1, 0]
    assert engine.read_list(address, cursor=seqs[0], order="desc", using=using) == []


@pytest.mark.parametrize("bad", [0, -5, 2.0, "10", True])
def test_list_limit_must_be_a_positive_integer(using: str, bad: Any) -> None:
    with pytest.raises(KanbanError) as excinfo:
        engine.read_list(value_list("app.events", "x"), limit=bad, using=using)
    assert error_code(excinfo) == ErrorCode.INVALID_ARGUMENT


def test_list_limit_clamps_at_ten_thousand(using: str) -> None:
    address = value_list("app.events", "big")
    engine.commit([append_list(address, n) for n in range(10_005)], using=using)
    assert len(engine.read_list(address, limit=50_000, using=using)) == 10_000
    assert len(engine.read_list(address, using=using)) == 1000


def test_deleting_a_list_removes_every_element_and_leaves_others(using: str) -> None:
    a, b = value_list("app.events", "a"), value_list("app.events", "b")
    engine.commit([append_list(a, 1), append_list(a, 2), append_list(b, 3)], using=using)
    (result,) = engine.commit([delete_list(a)], using=using)
    assert result.applied
    assert engine.read_list(a, using=using) == []
    assert [e.value for e in engine.read_list(b, using=using)] == [3]
    (again,) = engine.commit([delete_list(a)], using=using)
    assert not again.applied


# --- scans ---------------------------------------------------------------------------------


def test_scan_is_key_ascending_prefix_bound_and_namespace_isolated(using: str) -> None:
    for key in ["b/2", "a", "b/1", "b", "c", "b/10", "b\U0010ffff", "b0"]:
        put(using, value("app.state", key), key)
    put(using, value("app.statex", "b/3"), "other namespace")
    put(using, value("app", "b/4"), "parent namespace")
    keys = [s.address.key for s in engine.scan_values(value("app.state", "b/"), using=using)]
    assert keys == ["b/1", "b/10", "b/2"]
    everything = [s.address.key for s in engine.scan_values(value("app.state"), using=using)]
    assert everything == ["a", "b", "b/1", "b/10", "b/2", "b0", "b\U0010ffff", "c"]


def test_scan_is_bounded_and_pages_with_start_after(using: str) -> None:
    for n in range(25):
        put(using, value("app.state", f"k{n:02d}"), n)
    first = engine.scan_values(value("app.state", "k"), limit=10, using=using)
    assert len(first) == 10
    rest = engine.scan_values(
        value("app.state", "k"), start_after=first[-1].address.key, limit=100, using=using
    )
    assert [s.value for s in first + rest] == list(range(25))
    with pytest.raises(KanbanError):
        engine.scan_values(value("app.state"), limit=0, using=using)


# --- change events -------------------------------------------------------------------------


def test_events_are_published_after_commit_one_per_write(
    using: str, published: list[events.Change], committing: Callable[..., Any]
) -> None:
    with committing(), transaction.atomic(using=using):
        results = engine.commit(
            [set_value(value("app.state", "e"), 1), append_list(value_list("app.l"), 2)],
            using=using,
        )
        assert published == [], "nothing is published before the commit"
    assert [(c.kind, c.namespace, c.key, c.seq) for c in published] == [
        ("value", "app.state", "e", results[0].seq),
        ("list", "app.l", "", results[1].seq),
    ]


def test_a_rolled_back_write_publishes_nothing(
    using: str, published: list[events.Change], committing: Callable[..., Any]
) -> None:
    class Boom(Exception):
        pass

    with committing(), pytest.raises(Boom), transaction.atomic(using=using):
        engine.commit([set_value(value("app.state", "r"), 1)], using=using)
        raise Boom
    with committing(), pytest.raises(Conflict):
        engine.commit([set_value(value("app.state", "r"), 1, expected_seq=99)], using=using)
    assert published == []
    assert engine.get_value(value("app.state", "r"), using=using) is None


def test_a_delete_that_removes_nothing_publishes_nothing(
    using: str, published: list[events.Change], committing: Callable[..., Any]
) -> None:
    with committing():
        engine.commit([delete_value(value("app.state", "ghost"))], using=using)
    assert published == []


# Outside any caller's transaction the engine runs the driver's own BEGIN/COMMIT: the same
# contract must hold there (the tests above all run inside a test transaction).


@pytest.mark.django_db(transaction=True)
def test_outside_any_transaction_a_failed_commit_applies_and_publishes_nothing(
    published: list[events.Change],
) -> None:
    put("default", value("app.state", "kept"), 1)
    published.clear()
    with pytest.raises(Conflict):
        engine.commit(
            [
                set_value(value("app.state", "first"), 1),
                set_value(value("app.state", "kept"), 2, expected_seq=10**9),
            ]
        )
    assert published == []
    assert engine.get_value(value("app.state", "first")) is None
    assert engine.get_value(value("app.state", "kept")).value == 1  # type: ignore[union-attr]
    put("default", value("app.state", "after"), 3)  # the connection is usable again
    assert [c.key for c in published] == ["after"]


@pytest.mark.django_db(transaction=True)
def test_outside_any_transaction_a_lone_write_conflicts_or_commits_whole(
    published: list[events.Change],
) -> None:
    """On PostgreSQL a lone set or append is one statement, run without BEGIN/COMMIT."""
    seq = put("default", value("app.state", "lone"), 1)
    with pytest.raises(Conflict) as refused:
        engine.commit([set_value(value("app.state", "lone"), 2, expected_seq=seq + 10**6)])
    assert refused.value.current_seq == seq
    with pytest.raises(Conflict):
        engine.commit([set_value(value("app.state", "lone"), 3, expected_seq=None)])
    assert [c.seq for c in published] == [seq]
    (appended,) = engine.commit([append_list(value_list("app.lone"), "x")])
    assert engine.read_list(value_list("app.lone")) == [engine.ListElement(appended.seq, "x")]
    assert engine.get_value(value("app.state", "lone")).value == 1  # type: ignore[union-attr]
    assert [c.seq for c in published] == [seq, appended.seq]


@pytest.mark.django_db(transaction=True)
def test_outside_any_transaction_events_follow_the_commit() -> None:
    """A listener reading through another connection already sees the write."""
    seen: list[Any] = []

    def read_elsewhere(changes: list[events.Change]) -> None:
        def read() -> None:
            try:
                seen.append(engine.get_value(value("app.state", "visible")))
            finally:
                connections["default"].close()

        reader = threading.Thread(target=read)
        reader.start()
        reader.join()

    remove = events.CHANGES.listen(read_elsewhere)
    try:
        seq = put("default", value("app.state", "visible"), "yes")
    finally:
        remove()
    assert [(s.value, s.seq) for s in seen] == [("yes", seq)]


@pytest.mark.django_db(transaction=True)
def test_a_nested_read_while_a_cursor_is_in_use_gets_its_own_cursor() -> None:
    put("default", value("app.state", "a"), 1)
    put("default", value("app.state", "b"), 2)
    with engine.driver_cursor("default") as (dialect, outer):
        outer.execute(dialect.get_value, ("app.state", "a"))
        inner = engine.get_value(value("app.state", "b"))
        assert outer.fetchone() is not None, "the outer result survives the inner read"
    assert inner is not None and inner.value == 2


# --- namespace locks -----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_namespace_lock_holds_other_writers_of_it_until_the_holder_commits() -> None:
    """On the default database (the extra in-memory SQLite alias cannot be shared by threads)."""
    with pytest.raises(RuntimeError):
        engine.lock_namespace("app.locked")  # outside a transaction it would protect nothing
    held = threading.Event()
    order: list[str] = []

    def holder() -> None:
        try:
            with transaction.atomic():
                engine.lock_namespace("app.locked")
                held.set()
                time.sleep(0.3)
                order.append("holder commits")
        finally:
            connections["default"].close()

    def waiter() -> None:
        try:
            held.wait(5)
            with transaction.atomic():
                engine.lock_namespace("app.locked")
                order.append("waiter holds the lock")
        finally:
            connections["default"].close()

    threads = [threading.Thread(target=holder), threading.Thread(target=waiter)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert order == ["holder commits", "waiter holds the lock"]


def test_a_namespace_lock_is_taken_inside_a_transaction(using: str) -> None:
    with transaction.atomic(using=using):
        engine.lock_namespace("app.locked", using=using)
        put(using, value("app.locked", "k"), 1)
    assert engine.get_value(value("app.locked", "k"), using=using) is not None


# --- dump and load -------------------------------------------------------------------------


def fresh_store(using: str) -> None:
    """Make the storage tables anew, as on a database that never held any: the sequence
    starts again from one (the test's transaction takes it all back)."""
    with engine.driver_cursor(using) as (dialect, cursor):
        for statement in (*dialect.drop_statements, *dialect.create_statements):
            cursor.execute(statement)


def test_dump_and_load_restore_values_lists_and_seqs_exactly(using: str) -> None:
    put(using, value("app.state", "a"), {"z": 1, "a": [1.0, None]}, source={"via": "cli"})
    engine.commit([append_list(value_list("app.events"), n) for n in range(3)], using=using)
    removed = value("app.state", "newest")
    put(using, removed, 1)
    engine.commit([delete_value(removed)], using=using)  # the highest seq is a delete
    before = engine.get_value(value("app.state", "a"), using=using)
    before_list = engine.read_list(value_list("app.events"), using=using)
    out = io.StringIO()
    assert dump.dump(out, using=using) == 4
    with pytest.raises(KanbanError) as excinfo:
        dump.load(io.StringIO(out.getvalue()), using=using)
    assert "not empty" in excinfo.value.message
    assert dump.load(io.StringIO(out.getvalue()), replace=True, using=using) == 4
    assert engine.get_value(value("app.state", "a"), using=using) == before
    assert engine.read_list(value_list("app.events"), using=using) == before_list


def test_a_dump_loaded_into_a_fresh_database_never_reuses_a_revision(using: str) -> None:
    for n in range(3):
        put(using, value("app.state", f"k{n}"), n)
    engine.commit([append_list(value_list("app.events"), n) for n in range(3)], using=using)
    gone = value("app.state", "newest")
    put(using, gone, 1)
    engine.commit([delete_value(gone)], using=using)  # the highest seq left no row
    out = io.StringIO()
    dump.dump(out, using=using)
    header, *records = (json.loads(line) for line in out.getvalue().splitlines())

    fresh_store(using)
    assert put(using, value("probe", "k"), 1) == 1, "a fresh store starts from one"
    fresh_store(using)
    dump.load(io.StringIO(out.getvalue()), using=using)

    after = put(using, value("app.state", "after-load"), 1)
    assert after > header["lastSeq"] >= max(record["seq"] for record in records)


def plan_of(using: str, sql: str, params: tuple[Any, ...]) -> str:
    with engine.driver_cursor(using) as (dialect, cursor):
        if dialect.vendor == "postgresql":
            cursor.execute("ANALYZE list_values")
            cursor.execute("EXPLAIN " + sql, params)
        else:
            cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        return "\n".join(str(row[-1]) for row in cursor.fetchall())


def test_paging_a_list_walks_its_primary_key_range_and_never_sorts(using: str) -> None:
    log = value_list("app.log")
    engine.commit([append_list(log, n) for n in range(2000)], using=using)
    dialect = dialect_for(connections[using].vendor)
    plans = [
        plan_of(using, dialect.read_list_asc, (log.namespace, log.key, 100, 50)),
        plan_of(using, dialect.read_list_desc, (log.namespace, log.key, 1900, 50)),
    ]
    for plan in plans:
        if dialect.vendor == "postgresql":
            assert "list_values_pkey" in plan and "Sort" not in plan, plan
        else:
            assert "USING PRIMARY KEY" in plan and "TEMP B-TREE" not in plan, plan


def test_a_bad_dump_loads_nothing(using: str) -> None:
    put(using, value("app.state", "survivor"), 1)
    text = (
        '{"format": "kanban-storage", "version": 1, "lastSeq": 5}\n'
        '{"kind":"value","op":"set","namespace":"n","key":"k","seq":1,'
        '"writtenAt":"2026-01-01T00:00:00+00:00","value":1}\n'
        '{"kind":"value","op":"set","namespace":"n","key":"k2","seq":2,"value":NaN}\n'
    )
    with pytest.raises(KanbanError):
        dump.load(io.StringIO(text), replace=True, using=using)
    assert engine.get_value(value("app.state", "survivor"), using=using) is not None
    assert engine.get_value(value("n", "k"), using=using) is None


def test_a_dump_whose_header_understates_its_records_still_never_reuses_a_revision(
    using: str,
) -> None:
    """The loader raises the sequence past every record's seq, not only the header's
    ``lastSeq`` (a hand-edited or truncated header)."""
    text = (
        '{"format": "kanban-storage", "version": 1, "lastSeq": 1}\n'
        '{"kind":"value","op":"set","namespace":"n","key":"k","seq":500,'
        '"writtenAt":"2026-01-01T00:00:00+00:00","value":1}\n'
        '{"kind":"list","op":"append","namespace":"n","key":"l","seq":700,"value":2}\n'
    )
    fresh_store(using)
    dump.load(io.StringIO(text), using=using)
    assert put(using, value("n", "after"), 1) > 700


@pytest.mark.parametrize(
    "write",
    [
        {"op": "set", "namespace": "n", "key": "k", "value": 1},
        ("set", "n", "k", 1),
        None,
    ],
)
def test_commit_refuses_a_write_not_built_by_storage_writes_and_writes_nothing(
    using: str, write: Any
) -> None:
    kept = value("app.state", "kept")
    with pytest.raises(KanbanError) as excinfo:
        engine.commit([set_value(kept, 1), write], using=using)
    assert error_code(excinfo) == ErrorCode.INVALID_ARGUMENT
    assert engine.get_value(kept, using=using) is None
