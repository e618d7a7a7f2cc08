"""The project Knowledge base on every reachable backend: the seed's v2 paged layout, listing
with an opaque cursor that reads no body, bounded previews of huge bodies, tombstones, search
with context, line ranges, and serial writers committing index and body together."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections, transaction

from storage import engine
from storage.errors import Conflict, ErrorCode, KanbanError
from storage.knowledge import (
    DocumentPage,
    knowledge_create,
    knowledge_delete,
    knowledge_edit,
    knowledge_get,
    knowledge_list,
    knowledge_read_lines,
    knowledge_search,
)
from storage.knowledge_format import PREVIEW_SCAN_CHARS
from storage.kv import Dataset
from storage.writes import set_value

pytestmark = pytest.mark.django_db(databases="__all__")

ALICE = {"user": "alice", "via": "test"}
BOB = {"user": "bob", "via": "test"}


@pytest.fixture
def project() -> uuid.UUID:
    return uuid.uuid4()


def stored(project: uuid.UUID, key: str, using: str) -> Any:
    """The raw record under ``key`` of the project's PersistentValue (None when absent)."""
    entry = engine.get_value(Dataset(project, "persistentValue").address(key), using=using)
    return None if entry is None else entry.value


def source_of(project: uuid.UUID, key: str, using: str) -> Any:
    entry = engine.get_value(Dataset(project, "persistentValue").address(key), using=using)
    assert entry is not None
    return entry.source


def create(project: uuid.UUID, using: str, title: str, markdown: str = "", **kw: Any) -> str:
    summary = knowledge_create(
        project_id=project, title=title, markdown=markdown, source=ALICE, using=using, **kw
    )
    return summary.id


def list_all(project: uuid.UUID, using: str, limit: int = 128) -> Iterator[DocumentPage]:
    cursor = None
    while True:
        page = knowledge_list(project_id=project, cursor=cursor, limit=limit, using=using)
        yield page
        if page.next_cursor is None:
            return
        cursor = page.next_cursor


def listed_ids(project: uuid.UUID, using: str, limit: int = 128) -> list[str]:
    return [doc.id for page in list_all(project, using, limit) for doc in page.documents]


def code_of(excinfo: pytest.ExceptionInfo[KanbanError]) -> str:
    return str(excinfo.value.code)


# --- the stored layout -----------------------------------------------------------------------


def test_a_created_document_is_stored_in_the_seed_v2_layout(project: uuid.UUID, using: str) -> None:
    summary = knowledge_create(
        project_id=project,
        title="Runbook",
        markdown="# Runbook\n\nPersistent notes.",
        source=ALICE,
        using=using,
    )
    doc_id = summary.id

    meta = stored(project, "knowledge.documents", using)
    assert meta["version"] == 2
    assert meta["total"] == 1
    assert meta["sequence"] >= 1
    page_id = meta["firstPageId"]
    page = stored(project, f"knowledge.documents.page.{page_id}", using)
    assert page["documents"] == [
        {
            "id": doc_id,
            "title": "Runbook",
            "markdownPreview": "# Runbook Persistent notes.",
            "size": len("# Runbook\n\nPersistent notes."),
            "updatedAt": page["documents"][0]["updatedAt"],
        }
    ]
    assert stored(project, f"knowledge.documents.locator.{doc_id}", using) == {
        "id": doc_id,
        "pageId": page_id,
    }
    body = stored(project, f"knowledge.document.{doc_id}", using)
    assert set(body) == {"id", "title", "markdown", "createdAt", "updatedAt"}
    assert body["markdown"] == "# Runbook\n\nPersistent notes."
    assert summary.abstract.markdown_preview == "# Runbook Persistent notes."


def test_every_key_a_write_touches_records_the_callers_write_source(
    project: uuid.UUID, using: str
) -> None:
    doc_id = create(project, using, "Notes", "one")
    page_key = (
        f"knowledge.documents.page.{stored(project, 'knowledge.documents', using)['firstPageId']}"
    )
    keys = ["knowledge.documents", page_key, f"knowledge.documents.locator.{doc_id}"]
    keys.append(f"knowledge.document.{doc_id}")
    assert [source_of(project, key, using) for key in keys] == [ALICE] * 4

    knowledge_edit(project_id=project, document_id=doc_id, markdown="two", source=BOB, using=using)
    assert source_of(project, f"knowledge.document.{doc_id}", using) == BOB
    assert source_of(project, page_key, using) == BOB


def test_the_documents_of_one_project_are_invisible_to_another(using: str) -> None:
    board, other = uuid.uuid4(), uuid.uuid4()
    doc_id = create(board, using, "Private", "text")
    assert knowledge_list(project_id=other, using=using).documents == ()
    with pytest.raises(KanbanError) as excinfo:
        knowledge_get(project_id=other, document_id=doc_id, using=using)
    assert code_of(excinfo) == ErrorCode.NOT_FOUND


def test_a_v1_single_array_index_is_neither_read_nor_migrated(
    project: uuid.UUID, using: str
) -> None:
    v1 = [{"id": "old", "title": "Old", "markdown": "legacy"}]
    address = Dataset(project, "persistentValue").address("knowledge.documents")
    engine.commit([set_value(address, v1, source=ALICE)], using=using)
    for attempt in (
        lambda: knowledge_list(project_id=project, using=using),
        lambda: create(project, using, "New", "text"),
    ):
        with pytest.raises(KanbanError) as excinfo:
            attempt()
        assert code_of(excinfo) == ErrorCode.UNAVAILABLE
        assert excinfo.value.details["key"] == "knowledge.documents"
    assert stored(project, "knowledge.documents", using) == v1, "nothing was migrated"


# --- listing ---------------------------------------------------------------------------------


def test_an_empty_knowledge_base_lists_nothing_after_reading_only_its_metadata(
    project: uuid.UUID, using: str
) -> None:
    with engine.recording_reads() as reads:
        page = knowledge_list(project_id=project, using=using)
    assert (page.documents, page.total, page.next_cursor) == ((), 0, None)
    assert [read.address.key for read in reads] == ["knowledge.documents"]


def test_a_thousand_documents_list_across_pages_of_128_and_survive_deletes_in_the_middle(
    project: uuid.UUID, using: str
) -> None:
    created = [create(project, using, f"Document {n}", f"body {n}") for n in range(1000)]

    pages = list(list_all(project, using))
    assert [len(page.documents) for page in pages] == [128] * 7 + [104]
    assert [doc.id for page in pages for doc in page.documents] == created
    assert {page.total for page in pages} == {1000}
    meta = stored(project, "knowledge.documents", using)
    assert (meta["version"], meta["total"]) == (2, 1000)

    # The whole second page block (documents 128..255) and a run across pages 4 and 5.
    doomed = created[128:256] + created[500:540]
    for doc_id in doomed:
        assert knowledge_delete(project_id=project, document_id=doc_id, source=BOB, using=using)

    survivors = [doc_id for doc_id in created if doc_id not in set(doomed)]
    assert listed_ids(project, using) == survivors
    assert listed_ids(project, using, limit=50) == survivors
    assert knowledge_list(project_id=project, using=using).total == 1000 - len(doomed)
    for doc_id in doomed[:3] + doomed[-3:]:
        assert stored(project, f"knowledge.document.{doc_id}", using)["deleted"] is True
        locator = stored(project, f"knowledge.documents.locator.{doc_id}", using)
        assert (locator["deleted"], locator["pageId"]) == (True, None)


def test_the_first_list_call_reads_the_metadata_and_one_page_and_no_body(
    project: uuid.UUID, using: str
) -> None:
    for n in range(130):
        create(project, using, f"Doc {n}", "x" * 100)

    with engine.recording_reads() as reads:
        first = knowledge_list(project_id=project, using=using)
    keys = [read.address.key for read in reads]
    assert [read.op for read in reads] == ["get", "get"]
    assert keys[0] == "knowledge.documents"
    assert keys[1].startswith("knowledge.documents.page.")
    assert len(first.documents) == 128

    with engine.recording_reads() as reads:
        second = knowledge_list(project_id=project, cursor=first.next_cursor, using=using)
    assert len(reads) == 2 and not any(".document." in read.address.key for read in reads)
    assert [doc.title for doc in second.documents] == ["Doc 128", "Doc 129"]
    assert second.next_cursor is None


def test_a_cursor_in_the_middle_of_a_page_resumes_after_deletes_before_it(
    project: uuid.UUID, using: str
) -> None:
    ids = [create(project, using, f"Doc {n}") for n in range(10)]
    first = knowledge_list(project_id=project, limit=4, using=using)
    assert [doc.id for doc in first.documents] == ids[:4]

    knowledge_delete(project_id=project, document_id=ids[1], source=ALICE, using=using)
    rest = knowledge_list(project_id=project, cursor=first.next_cursor, limit=4, using=using)
    assert [doc.id for doc in rest.documents] == ids[4:8]

    # Deleting the very document the cursor stopped after still resumes at the next one.
    knowledge_delete(project_id=project, document_id=ids[7], source=ALICE, using=using)
    last = knowledge_list(project_id=project, cursor=rest.next_cursor, limit=4, using=using)
    assert [doc.id for doc in last.documents] == ids[8:]
    assert last.next_cursor is None


def test_a_cursor_naming_a_page_emptied_since_moves_on_to_the_next_page(
    project: uuid.UUID, using: str
) -> None:
    ids = [create(project, using, f"Doc {n}") for n in range(300)]
    first = knowledge_list(project_id=project, using=using)
    for doc_id in ids[128:256]:
        knowledge_delete(project_id=project, document_id=doc_id, source=ALICE, using=using)

    after = knowledge_list(project_id=project, cursor=first.next_cursor, using=using)
    assert [doc.id for doc in after.documents] == ids[256:]

    meta = stored(project, "knowledge.documents", using)
    first_page = stored(project, f"knowledge.documents.page.{meta['firstPageId']}", using)
    last_page = stored(project, f"knowledge.documents.page.{meta['lastPageId']}", using)
    assert first_page["next"] == meta["lastPageId"], "the emptied page is unlinked"
    assert last_page["prev"] == meta["firstPageId"]


def test_new_documents_go_to_the_last_page_and_a_full_one_opens_a_new_page(
    project: uuid.UUID, using: str
) -> None:
    ids = [create(project, using, f"Doc {n}") for n in range(129)]
    # Room freed on the first page is not refilled: order stays creation order.
    knowledge_delete(project_id=project, document_id=ids[0], source=ALICE, using=using)
    newest = create(project, using, "Newest")
    meta = stored(project, "knowledge.documents", using)
    last_page = stored(project, f"knowledge.documents.page.{meta['lastPageId']}", using)
    assert [doc["id"] for doc in last_page["documents"]] == [ids[128], newest]
    assert listed_ids(project, using) == [*ids[1:], newest]


def test_deleting_every_document_leaves_an_empty_index_that_accepts_new_ones(
    project: uuid.UUID, using: str
) -> None:
    ids = [create(project, using, f"Doc {n}") for n in range(3)]
    for doc_id in ids:
        knowledge_delete(project_id=project, document_id=doc_id, source=ALICE, using=using)
    meta = stored(project, "knowledge.documents", using)
    assert (meta["total"], meta["firstPageId"], meta["lastPageId"]) == (0, None, None)
    assert knowledge_list(project_id=project, using=using).documents == ()
    again = create(project, using, "Again")
    assert listed_ids(project, using) == [again]


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "not a cursor!",
        "e30",  # {}
        "eyJ2IjoyLCJwIjoicDEiLCJvIjowfQ",  # version 2
        "eyJ2IjoxLCJwIjoicDEiLCJvIjotMX0",  # negative offset
        "eyJ2IjoxLCJwIjoiLi4vLi4iLCJvIjowfQ",  # page id "../.."
        "_-_-",
    ],
)
def test_a_cursor_this_server_did_not_issue_is_invalid_argument(
    project: uuid.UUID, using: str, cursor: str
) -> None:
    create(project, using, "Doc")
    with pytest.raises(KanbanError) as excinfo:
        knowledge_list(project_id=project, cursor=cursor, using=using)
    assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT
    assert excinfo.value.details["field"] == "cursor"


def test_a_well_formed_cursor_naming_a_page_that_never_existed_is_invalid_argument(
    project: uuid.UUID, using: str
) -> None:
    create(project, using, "Doc")
    forged = "eyJ2IjoxLCJwIjoicDk5OTkiLCJvIjowfQ"  # {"v":1,"p":"p9999","o":0}
    with pytest.raises(KanbanError) as excinfo:
        knowledge_list(project_id=project, cursor=forged, using=using)
    assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT


# --- large bodies ----------------------------------------------------------------------------


def test_a_5_mb_document_is_created_and_listed_fast_and_get_returns_all_of_it(
    project: uuid.UUID, using: str
) -> None:
    # The only words sit past the first 16K characters: a preview that scanned further
    # would show them.
    markdown = "\n" * PREVIEW_SCAN_CHARS + ("needle in a haystack\n" * 250_000)
    assert len(markdown) > 5_000_000

    started = time.perf_counter()
    summary = knowledge_create(
        project_id=project, title="Huge", markdown=markdown, source=ALICE, using=using
    )
    listing = knowledge_list(project_id=project, using=using)
    elapsed = time.perf_counter() - started

    assert summary.abstract.markdown_preview == ""
    (abstract,) = listing.documents
    assert (abstract.markdown_preview, abstract.size) == ("", len(markdown))
    assert elapsed < 5, f"create and list took {elapsed:.1f}s"
    document = knowledge_get(project_id=project, document_id=summary.id, using=using)
    assert document.markdown == markdown


def test_the_preview_is_the_start_of_the_body_and_stops_at_16k_characters(
    project: uuid.UUID, using: str
) -> None:
    filler = "word " * (PREVIEW_SCAN_CHARS // 5)
    doc_id = create(project, using, "Long", filler + "NEEDLE")
    (abstract,) = knowledge_list(project_id=project, using=using).documents
    assert abstract.id == doc_id
    assert abstract.markdown_preview.startswith("word word")
    assert abstract.markdown_preview.endswith("…")
    assert len(abstract.markdown_preview) == 240
    assert "NEEDLE" not in abstract.markdown_preview


def test_a_body_may_pass_the_value_limit_but_not_the_document_limit(
    project: uuid.UUID, using: str, settings: Any
) -> None:
    settings.KANBAN_MAX_VALUE_BYTES = 64 * 1024
    settings.KANBAN_MAX_DOCUMENT_BYTES = 256 * 1024
    create(project, using, "Over the value limit", "a" * (128 * 1024))
    create(project, using, "At the document limit, escaped", "\n" * (256 * 1024))
    with pytest.raises(KanbanError) as excinfo:
        create(project, using, "Over the document limit", "a" * (256 * 1024 + 1))
    assert code_of(excinfo) == ErrorCode.TOO_LARGE
    assert knowledge_list(project_id=project, using=using).total == 2


# --- get, edit, delete -----------------------------------------------------------------------


def test_get_returns_the_body_with_its_revision(project: uuid.UUID, using: str) -> None:
    summary = knowledge_create(
        project_id=project, title="Doc", markdown="# Doc\nbody", source=ALICE, using=using
    )
    document = knowledge_get(project_id=project, document_id=summary.id, using=using)
    assert (document.title, document.markdown) == ("Doc", "# Doc\nbody")
    assert document.created_at == document.updated_at == summary.created_at
    assert document.created_at.tzinfo is not None
    assert document.revision == summary.revision


def test_edit_changes_body_and_abstract_and_keeps_the_creation_time(
    project: uuid.UUID, using: str
) -> None:
    first = knowledge_create(
        project_id=project, title="Old", markdown="old text", source=ALICE, using=using
    )
    time.sleep(0.002)
    edited = knowledge_edit(
        project_id=project, document_id=first.id, title="New", source=BOB, using=using
    )
    document = knowledge_get(project_id=project, document_id=first.id, using=using)
    assert (document.title, document.markdown) == ("New", "old text")
    assert document.created_at == first.created_at
    assert document.updated_at > document.created_at
    assert document.revision == edited.revision != first.revision
    (abstract,) = knowledge_list(project_id=project, using=using).documents
    assert (abstract.title, abstract.markdown_preview) == ("New", "old text")

    knowledge_edit(
        project_id=project, document_id=first.id, markdown="fresh words", source=BOB, using=using
    )
    (abstract,) = knowledge_list(project_id=project, using=using).documents
    assert (abstract.title, abstract.markdown_preview, abstract.size) == ("New", "fresh words", 11)


def test_edit_with_a_stale_revision_conflicts_and_writes_nothing(
    project: uuid.UUID, using: str
) -> None:
    first = knowledge_create(
        project_id=project, title="Doc", markdown="v1", source=ALICE, using=using
    )
    knowledge_edit(
        project_id=project,
        document_id=first.id,
        markdown="v2",
        expected_revision=first.revision,
        source=ALICE,
        using=using,
    )
    with pytest.raises(Conflict):
        knowledge_edit(
            project_id=project,
            document_id=first.id,
            markdown="v3",
            expected_revision=first.revision,
            source=BOB,
            using=using,
        )
    assert knowledge_get(project_id=project, document_id=first.id, using=using).markdown == "v2"


def test_edit_and_get_of_a_missing_document_are_not_found(project: uuid.UUID, using: str) -> None:
    for attempt in (
        lambda: knowledge_get(project_id=project, document_id="nope", using=using),
        lambda: knowledge_edit(
            project_id=project, document_id="nope", title="T", source=ALICE, using=using
        ),
    ):
        with pytest.raises(KanbanError) as excinfo:
            attempt()
        assert code_of(excinfo) == ErrorCode.NOT_FOUND


def test_delete_leaves_tombstones_and_is_true_only_when_something_was_removed(
    project: uuid.UUID, using: str
) -> None:
    doc_id = create(project, using, "Doc", "text")
    assert knowledge_delete(project_id=project, document_id=doc_id, source=BOB, using=using)
    assert stored(project, f"knowledge.document.{doc_id}", using)["deleted"] is True
    assert source_of(project, f"knowledge.document.{doc_id}", using) == BOB
    with pytest.raises(KanbanError) as excinfo:
        knowledge_get(project_id=project, document_id=doc_id, using=using)
    assert code_of(excinfo) == ErrorCode.NOT_FOUND
    assert not knowledge_delete(project_id=project, document_id=doc_id, source=BOB, using=using)
    assert not knowledge_delete(project_id=project, document_id="never", source=BOB, using=using)


def test_a_chosen_id_is_stable_unique_and_reusable_after_delete(
    project: uuid.UUID, using: str
) -> None:
    assert create(project, using, "Memory", "a", document_id="assistant-memory-1") == (
        "assistant-memory-1"
    )
    with pytest.raises(KanbanError) as excinfo:
        create(project, using, "Again", "b", document_id="assistant-memory-1")
    assert code_of(excinfo) == ErrorCode.CONFLICT
    knowledge_delete(
        project_id=project, document_id="assistant-memory-1", source=ALICE, using=using
    )
    create(project, using, "Reborn", "c", document_id="assistant-memory-1")
    assert listed_ids(project, using) == ["assistant-memory-1"]


def test_generated_ids_step_over_ids_a_caller_chose(project: uuid.UUID, using: str) -> None:
    first = create(project, using, "Generated")
    taken = f"doc-{int(first.removeprefix('doc-')) + 1}"
    create(project, using, "Chosen", document_id=taken)
    third = create(project, using, "Generated again")
    assert len({first, taken, third}) == 3


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("title", {"title": ""}),
        ("title", {"title": "t" * 1025}),
        ("markdown", {"markdown": None}),
        ("documentId", {"document_id": "../escape"}),
        ("documentId", {"document_id": "a" * 129}),
    ],
)
def test_bad_create_arguments_are_invalid_argument_and_write_nothing(
    project: uuid.UUID, using: str, field: str, kwargs: dict[str, Any]
) -> None:
    arguments: dict[str, Any] = {"title": "T", "markdown": "m", **kwargs}
    with pytest.raises(KanbanError) as excinfo:
        knowledge_create(project_id=project, source=ALICE, using=using, **arguments)
    assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT
    assert excinfo.value.details["field"] == field
    assert stored(project, "knowledge.documents", using) is None


def test_a_write_rolled_back_by_the_caller_leaves_nothing_behind(
    project: uuid.UUID, using: str
) -> None:
    with pytest.raises(RuntimeError), transaction.atomic(using=using):
        create(project, using, "Doomed", "text")
        raise RuntimeError("the caller fails after the create")
    assert stored(project, "knowledge.documents", using) is None
    assert (
        engine.scan_values(Dataset(project, "persistentValue").address("knowledge"), using=using)
        == []
    )


# --- search and lines ------------------------------------------------------------------------

RUNBOOK = "# Runbook\nStart the server.\nCheck the logs.\nRestart the SERVER if needed.\nDone."


def test_search_returns_each_matching_line_with_its_context(project: uuid.UUID, using: str) -> None:
    runbook = create(project, using, "Runbook", RUNBOOK)
    create(project, using, "Other", "nothing here\nserver room")

    result = knowledge_search(
        project_id=project, query="server", before_lines=1, after_lines=1, using=using
    )
    assert not result.truncated
    assert [(hit.document_id, hit.line_number) for hit in result.hits][:2] == [
        (runbook, 2),
        (runbook, 4),
    ]
    first, second, third = result.hits
    assert (first.line, first.before, first.after) == (
        "Start the server.",
        ("# Runbook",),
        ("Check the logs.",),
    )
    assert (second.line, second.before, second.after) == (
        "Restart the SERVER if needed.",
        ("Check the logs.",),
        ("Done.",),
    )
    assert (third.title, third.line_number, third.before, third.after) == (
        "Other",
        2,
        ("nothing here",),
        (),
    )


def test_search_within_one_document_and_with_context_at_the_edges(
    project: uuid.UUID, using: str
) -> None:
    runbook = create(project, using, "Runbook", RUNBOOK)
    create(project, using, "Other", "# Runbook copy")
    result = knowledge_search(
        project_id=project,
        query="runbook",
        document_id=runbook,
        before_lines=3,
        after_lines=2,
        using=using,
    )
    (hit,) = result.hits
    assert (hit.line_number, hit.before, hit.after) == (
        1,
        (),
        ("Start the server.", "Check the logs."),
    )


def test_search_stops_after_its_limit_and_says_so(project: uuid.UUID, using: str) -> None:
    create(project, using, "Many", "\n".join(["match"] * 150))
    default = knowledge_search(project_id=project, query="match", using=using)
    assert (len(default.hits), default.truncated) == (100, True)
    exact = knowledge_search(project_id=project, query="match", limit=150, using=using)
    assert (len(exact.hits), exact.truncated) == (150, False)


def test_a_search_that_would_read_past_its_budget_stops_with_too_large(
    project: uuid.UUID, using: str
) -> None:
    """32 guest searches over 64 MiB held a worker for 10 s and doubled its
    memory. A search reads one document at a time and stops at its budget."""
    ids = [create(project, using, f"D{n}", "x" * 999 + "\nneedle") for n in range(3)]
    found = knowledge_search(project_id=project, query="needle", budget_chars=3 * 1006, using=using)
    assert len(found.hits) == 3
    with pytest.raises(KanbanError) as excinfo:
        knowledge_search(project_id=project, query="needle", budget_chars=2500, using=using)
    assert code_of(excinfo) == ErrorCode.TOO_LARGE
    assert excinfo.value.details == {"budgetChars": 2500}
    one = knowledge_search(
        project_id=project, query="needle", document_id=ids[2], budget_chars=2500, using=using
    )
    assert len(one.hits) == 1


def test_search_skips_deleted_documents_and_refuses_bad_arguments(
    project: uuid.UUID, using: str
) -> None:
    gone = create(project, using, "Gone", "secret")
    knowledge_delete(project_id=project, document_id=gone, source=ALICE, using=using)
    assert knowledge_search(project_id=project, query="secret", using=using).hits == ()
    for kwargs in ({"query": ""}, {"query": "a\nb"}, {"query": "x", "before_lines": -1}):
        with pytest.raises(KanbanError) as excinfo:
            knowledge_search(project_id=project, using=using, **kwargs)
        assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT
    with pytest.raises(KanbanError) as excinfo:
        knowledge_search(project_id=project, query="secret", document_id=gone, using=using)
    assert code_of(excinfo) == ErrorCode.NOT_FOUND


def test_read_lines_at_the_edges_of_a_document(project: uuid.UUID, using: str) -> None:
    doc_id = create(project, using, "Runbook", RUNBOOK + "\n")

    def read(start: int, end: int | None = None) -> tuple[str, ...]:
        return knowledge_read_lines(
            project_id=project, document_id=doc_id, start_line=start, end_line=end, using=using
        ).lines

    assert read(1, 1) == ("# Runbook",)
    assert read(5, 5) == ("Done.",)
    assert read(4) == ("Restart the SERVER if needed.", "Done.")
    assert read(2, 3) == ("Start the server.", "Check the logs.")
    whole = knowledge_read_lines(project_id=project, document_id=doc_id, start_line=1, using=using)
    assert (whole.start_line, whole.end_line, whole.total_lines) == (1, 5, 5)
    assert read(4, 99) == ("Restart the SERVER if needed.", "Done."), "an end past the end clamps"

    with pytest.raises(KanbanError) as excinfo:
        read(6)
    assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT
    assert "has 5 lines" in excinfo.value.message
    assert excinfo.value.details["totalLines"] == 5
    for start, end in ((0, None), (3, 2)):
        with pytest.raises(KanbanError) as excinfo:
            read(start, end)
        assert code_of(excinfo) == ErrorCode.INVALID_ARGUMENT


def test_lines_end_at_newlines_and_carriage_returns_are_dropped(
    project: uuid.UUID, using: str
) -> None:
    doc_id = create(project, using, "CRLF", "one\r\ntwo\r\n\r\nfour")
    lines = knowledge_read_lines(project_id=project, document_id=doc_id, start_line=1, using=using)
    assert lines.lines == ("one", "two", "", "four")
    empty = create(project, using, "Empty", "")
    with pytest.raises(KanbanError) as excinfo:
        knowledge_read_lines(project_id=project, document_id=empty, start_line=1, using=using)
    assert "has 0 lines" in excinfo.value.message


# --- concurrent writers ----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_eight_concurrent_creators_lose_no_index_entry() -> None:
    """On the default database: PostgreSQL when DATABASE_URL is set (the advisory lock),
    else the SQLite file (its write lock). The extra SQLite alias of a PostgreSQL run is an
    in-memory shared-cache database, whose table locks fail instead of waiting."""
    using = "default"
    project = uuid.uuid4()
    writers, each = 8, 50
    start = threading.Barrier(writers)
    failures: list[BaseException] = []

    def write(writer: int) -> None:
        try:
            start.wait()
            for n in range(each):
                knowledge_create(
                    project_id=project,
                    title=f"writer {writer} doc {n}",
                    markdown=f"from writer {writer}",
                    source={"user": f"writer-{writer}"},
                    using=using,
                )
        except BaseException as exc:
            failures.append(exc)
        finally:
            connections[using].close()  # each thread had its own connection

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    pages = list(list_all(project, using))
    titles = [doc.title for page in pages for doc in page.documents]
    assert pages[0].total == writers * each == 400
    assert sorted(titles) == sorted(
        f"writer {w} doc {n}" for w in range(writers) for n in range(each)
    )
    assert [len(page.documents) for page in pages] == [128, 128, 128, 16]
    for writer in range(writers):
        mine = [t for t in titles if t.startswith(f"writer {writer} ")]
        assert mine == [f"writer {writer} doc {n}" for n in range(each)], "creation order kept"
