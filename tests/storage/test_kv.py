"""KV and PersistentValue rules: four isolated datasets, input limits at the boundary,
compare-and-set on opaque revisions, and change events mapped back to projects."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from storage import jsoncodec
from storage.errors import Conflict, ErrorCode, KanbanError
from storage.kv import (
    Dataset,
    KvChange,
    add_kv_listener,
    kv_compare_and_set,
    kv_delete,
    kv_get,
    kv_history,
    kv_history_prune,
    kv_scan,
    kv_set,
    kv_update,
)

pytestmark = pytest.mark.django_db

SOURCE = {"via": "test"}
BOARD = uuid.UUID("11111111-1111-4111-8111-111111111111")
OTHER = uuid.UUID("22222222-2222-4222-8222-222222222222")


def nested(depth: int) -> Any:
    data: Any = 0
    for _ in range(depth):
        data = [data]
    return data


def code_of(excinfo: pytest.ExceptionInfo[KanbanError]) -> str:
    return str(excinfo.value.code)


def test_the_four_datasets_of_a_project_are_separate() -> None:
    datasets = [
        Dataset(BOARD, "kv"),
        Dataset(BOARD, "kv", "conv-1"),
        Dataset(BOARD, "persistentValue"),
        Dataset(BOARD, "persistentValue", "conv-1"),
        Dataset(BOARD, "kv", "conv-2"),
        Dataset(OTHER, "kv"),
    ]
    for n, dataset in enumerate(datasets):
        kv_set(dataset=dataset, key="shared-key", value=n, source=SOURCE)
    for n, dataset in enumerate(datasets):
        entry = kv_get(dataset=dataset, key="shared-key")
        assert entry is not None and entry.value == n


def test_no_other_domain_exists() -> None:
    with pytest.raises(KanbanError) as excinfo:
        Dataset(BOARD, "workflow").address("k")  # type: ignore[arg-type]
    assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT


def test_get_returns_value_revision_time_and_source() -> None:
    dataset = Dataset(BOARD)
    revision = kv_set(dataset=dataset, key="k", value={"a": 1}, source={"via": "api", "user": "x"})
    entry = kv_get(dataset=dataset, key="k")
    assert entry is not None
    assert (entry.key, entry.value, entry.revision) == ("k", {"a": 1}, revision)
    assert entry.source == {"via": "api", "user": "x"}
    assert entry.updated_at.tzinfo is not None
    assert isinstance(revision, str)


def test_a_stored_null_is_distinct_from_absence() -> None:
    dataset = Dataset(BOARD)
    assert kv_get(dataset=dataset, key="n") is None
    kv_set(dataset=dataset, key="n", value=None, source=SOURCE)
    entry = kv_get(dataset=dataset, key="n")
    assert entry is not None and entry.value is None


def test_delete_is_true_only_when_something_was_removed() -> None:
    dataset = Dataset(BOARD)
    assert kv_delete(dataset=dataset, key="gone") is False
    kv_set(dataset=dataset, key="gone", value=1, source=SOURCE)
    assert kv_delete(dataset=dataset, key="gone") is True
    assert kv_get(dataset=dataset, key="gone") is None
    assert kv_delete(dataset=dataset, key="gone") is False


def test_keys_are_one_to_1024_characters_without_nul() -> None:
    dataset = Dataset(BOARD)
    kv_set(dataset=dataset, key="k" * 1024, value=1, source=SOURCE)
    for bad in ["", "k" * 1025, "a\x00b", "\udc00"]:
        with pytest.raises(KanbanError) as excinfo:
            kv_set(dataset=dataset, key=bad, value=1, source=SOURCE)
        assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT
        assert excinfo.value.details.get("field") == "key"


def test_value_exactly_at_the_size_limit_is_accepted_and_one_byte_over_is_refused(
    settings: Any,
) -> None:
    settings.KANBAN_MAX_VALUE_BYTES = 1024 * 1024
    dataset = Dataset(BOARD)
    at_limit = "é" * ((1024 * 1024 - 2) // 2)  # two bytes each, plus two quotes
    assert len(jsoncodec.encode(at_limit).encode()) == 1024 * 1024
    kv_set(dataset=dataset, key="big", value=at_limit, source=SOURCE)
    over = at_limit + "x"
    with pytest.raises(KanbanError) as excinfo:
        kv_set(dataset=dataset, key="big", value=over, source=SOURCE)
    assert code_of(excinfo) == ErrorCode.TOO_LARGE
    entry = kv_get(dataset=dataset, key="big")
    assert entry is not None and entry.value == at_limit, "the refused write changed nothing"


def test_depth_64_is_accepted_and_65_refused() -> None:
    dataset = Dataset(BOARD)
    kv_set(dataset=dataset, key="deep", value=nested(64), source=SOURCE)
    with pytest.raises(KanbanError) as excinfo:
        kv_set(dataset=dataset, key="deeper", value=nested(65), source=SOURCE)
    assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT
    assert kv_get(dataset=dataset, key="deeper") is None


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "[1, NaN]"])
def test_nan_and_infinity_literals_are_not_json(literal: str) -> None:
    with pytest.raises(KanbanError) as excinfo:
        jsoncodec.decode(literal)
    assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT


@pytest.mark.parametrize("literal", ["1e999", "[-1e400]", '{"a": 1E+309}'])
def test_numbers_that_overflow_to_infinity_are_not_json(literal: str) -> None:
    with pytest.raises(KanbanError) as excinfo:
        jsoncodec.decode(literal)
    assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT


def test_an_integer_too_long_to_convert_is_refused_not_a_crash() -> None:
    # Past 4300 digits int() raises a bare ValueError (Python's conversion limit); it
    # escaped decode and crashed the bridge consumer and the REST parser.
    assert jsoncodec.decode("-" + "9" * jsoncodec.MAX_INT_DIGITS) == -int("9" * 4300)
    for text in ("9" * 4301, '{"id": -' + "1" * 5000 + "}"):
        with pytest.raises(KanbanError) as excinfo:
            jsoncodec.decode(text)
        assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT
    assert jsoncodec.decode("1.5e300") == 1.5e300


def test_the_string_nan_is_an_ordinary_string() -> None:
    dataset = Dataset(BOARD)
    kv_set(dataset=dataset, key="s", value="NaN", source=SOURCE)
    entry = kv_get(dataset=dataset, key="s")
    assert entry is not None and entry.value == "NaN"


def test_compare_and_set_absent_current_and_stale() -> None:
    dataset = Dataset(BOARD)
    first = kv_compare_and_set(
        dataset=dataset, key="c", expected_revision=None, value=1, source=SOURCE
    )
    with pytest.raises(Conflict):
        kv_compare_and_set(dataset=dataset, key="c", expected_revision=None, value=2, source=SOURCE)
    second = kv_compare_and_set(
        dataset=dataset, key="c", expected_revision=first, value=2, source=SOURCE
    )
    with pytest.raises(Conflict):
        kv_compare_and_set(
            dataset=dataset, key="c", expected_revision=first, value=3, source=SOURCE
        )
    entry = kv_get(dataset=dataset, key="c")
    assert entry is not None and (entry.value, entry.revision) == (2, second)


@pytest.mark.parametrize("bad", ["abc", "", "-1", "0", "1.5", "١٢", "9" * 21, 7])
def test_a_malformed_revision_is_invalid_argument(bad: Any) -> None:
    with pytest.raises(KanbanError) as excinfo:
        kv_compare_and_set(
            dataset=Dataset(BOARD), key="c", expected_revision=bad, value=1, source=SOURCE
        )
    assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT


def test_update_runs_a_compare_and_set_loop() -> None:
    dataset = Dataset(BOARD)
    value, revision = kv_update(dataset=dataset, key="n", fn=lambda v: (v or 0) + 1, source=SOURCE)
    assert value == 1
    value, second = kv_update(dataset=dataset, key="n", fn=lambda v: v + 1, source=SOURCE)
    assert value == 2 and int(second) > int(revision)


def test_update_retries_when_another_writer_gets_in_between() -> None:
    dataset = Dataset(BOARD)
    kv_set(dataset=dataset, key="n", value=0, source=SOURCE)
    calls = []

    def racing_increment(current: int) -> int:
        calls.append(current)
        if len(calls) == 1:  # someone else writes after our read
            kv_set(dataset=dataset, key="n", value=100, source=SOURCE)
        return current + 1

    value, _ = kv_update(dataset=dataset, key="n", fn=racing_increment, source=SOURCE)
    assert calls == [0, 100] and value == 101


def test_update_gives_up_with_conflict_after_bounded_attempts() -> None:
    dataset = Dataset(BOARD)
    kv_set(dataset=dataset, key="n", value=0, source=SOURCE)

    def always_raced(current: int) -> int:
        kv_set(dataset=dataset, key="n", value=current + 10, source=SOURCE)
        return current + 1

    with pytest.raises(KanbanError) as excinfo:
        kv_update(dataset=dataset, key="n", fn=always_raced, source=SOURCE, max_attempts=3)
    assert code_of(excinfo) == ErrorCode.CONFLICT


def test_scan_pages_one_dataset_only() -> None:
    for n in range(5):
        kv_set(dataset=Dataset(BOARD), key=f"card:{n}", value=n, source=SOURCE)
    kv_set(dataset=Dataset(BOARD, "kv", "c"), key="card:9", value=9, source=SOURCE)
    kv_set(dataset=Dataset(OTHER), key="card:8", value=8, source=SOURCE)
    page = kv_scan(dataset=Dataset(BOARD), prefix="card:", limit=3)
    rest = kv_scan(dataset=Dataset(BOARD), prefix="card:", start_after=page[-1].key)
    assert [e.value for e in page + rest] == [0, 1, 2, 3, 4]


@pytest.fixture
def kv_changes() -> Iterator[list[KvChange]]:
    seen: list[KvChange] = []
    remove = add_kv_listener(seen.extend)
    yield seen
    remove()


def test_committed_writes_are_reported_per_project_dataset_and_key(
    kv_changes: list[KvChange], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        revision = kv_set(dataset=Dataset(BOARD, "kv", "c.1"), key="k", value=1, source=SOURCE)
    with django_capture_on_commit_callbacks(execute=True):
        kv_delete(dataset=Dataset(BOARD, "kv", "c.1"), key="k", source={"via": "cleanup"})
    assert kv_changes[0] == KvChange(
        Dataset(BOARD, "kv", "c.1"), "k", revision, deleted=False, text="1", source='{"via":"test"}'
    )
    assert kv_changes[1].deleted and int(kv_changes[1].revision) > int(revision)
    assert kv_changes[1].source == '{"via":"cleanup"}', "who deleted it, as its history keeps"


def test_pruning_deletes_the_versions_past_the_history_days_of_every_dataset(
    settings: Any,
) -> None:
    """What no read shows any more (``KANBAN_HISTORY_DAYS``) is what pruning deletes; the
    current values stay."""
    settings.KANBAN_HISTORY_DAYS = 10
    board, other = Dataset(BOARD), Dataset(OTHER, "persistentValue")
    for n in range(3):
        kv_set(dataset=board, key="card:1", value=n, source=SOURCE)
    kv_set(dataset=other, key="note", value="x", source=SOURCE)
    assert len(kv_history(dataset=board, key="card:1")) == 3

    assert kv_history_prune() == 0
    in_eleven_days = datetime.now(UTC) + timedelta(days=11)
    assert kv_history_prune(now=in_eleven_days) == 4
    assert kv_history(dataset=board, key="card:1") == []
    assert kv_get(dataset=board, key="card:1").value == 2  # type: ignore[union-attr]
    assert kv_get(dataset=other, key="note").value == "x"  # type: ignore[union-attr]
