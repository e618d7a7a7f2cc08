"""Deleting a project takes its data with it (red team, Low 7: a re-imported package with
the same UUID, even a different one, inherited the deleted project's KV)."""

from __future__ import annotations

import io
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from kanban.data.knowledge import project_knowledge_create
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from kanban.projects.lifecycle import project_create, project_delete, project_delete_by_owner
from storage.errors import ErrorCode, KanbanError
from storage.knowledge import knowledge_create, knowledge_list
from storage.kv import Dataset, kv_get, kv_set, kv_stored_project_ids
from tests.factories import a_project, a_user, users

pytestmark = pytest.mark.django_db


def test_deleting_a_project_erases_its_datasets_and_no_one_elses() -> None:
    doomed, other = project_create(name="Doomed"), project_create(name="Other")
    datasets = [
        Dataset(doomed.id),
        Dataset(doomed.id, "persistentValue"),
        Dataset(doomed.id, "kv", "conversation-1"),
    ]
    for dataset in [*datasets, Dataset(other.id)]:
        kv_set(dataset=dataset, key="k", value="secret", source={})
    knowledge_create(project_id=doomed.id, title="Runbook", markdown="# x", source={})
    doomed_id = doomed.id

    project_delete(project=doomed)

    assert all(kv_get(dataset=d, key="k") is None for d in datasets)
    assert kv_get(dataset=Dataset(other.id), key="k") is not None
    again = project_create(name="Someone else's", project_id=doomed_id)
    assert kv_get(dataset=Dataset(again.id), key="k") is None, "nothing is inherited"
    assert not knowledge_list(project_id=again.id).documents


@pytest.mark.django_db(transaction=True)
def test_creations_at_the_same_moment_cannot_each_find_room_under_the_board_limit(
    settings: Any,
) -> None:
    """The count is taken under a lock on the person's row: eight creations at once by one
    person with room for three make three boards, not eight."""
    import threading

    from django.db import connections

    from kanban.models import Membership
    from kanban.projects.board_templates import board_create
    from storage.errors import KanbanError

    settings.KANBAN_MAX_BOARDS_PER_USER = 3
    dave = a_user("dave")
    outcomes: list[str] = []
    start = threading.Barrier(8)

    def make(n: int) -> None:
        try:
            start.wait()
            board_create(user=dave, name=f"Board {n}", template="blank")
            outcomes.append("made")
        except KanbanError as error:
            outcomes.append(str(error.code))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=make, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["limit_reached"] * 5 + ["made"] * 3
    assert Membership.objects.filter(user=dave, role="owner").count() == 3


def written_until_refused(write: Callable[[int], object], count: list[int], n: int) -> None:
    """Write again and again until the project refuses (it is gone), counting the writes."""
    try:
        i = 0
        while True:
            i += 1
            try:
                write(i)
            except KanbanError as refused:
                assert refused.code == ErrorCode.NOT_FOUND, refused
                return
            count[n] += 1
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("trial", range(5))
def test_writes_racing_the_owners_delete_leave_nothing_behind(trial: int) -> None:
    """#4 L5: four writers while alice deletes the board. Each write either commits before
    the delete, which then erases it, or is refused after it; none lands in between (4 of 5
    trials left orphan rows that a re-import under the same id would inherit)."""
    alice, bob = users("alice", "bob")
    board = a_project(name="Doomed", owner=alice, members={bob: "developer"})
    via = Provenance(via="api")

    def kv_write(n: int) -> Callable[[int], object]:
        return lambda i: project_kv_set(
            target=Target(user=bob, project_id=board.id), key=f"w{n}:{i}", value=i, provenance=via
        )

    def document(i: int) -> object:
        return project_knowledge_create(
            target=Target(user=bob, project_id=board.id),
            title=f"Note {i}",
            markdown="x",
            provenance=via,
        )

    count = [0, 0, 0, 0]
    writes = [kv_write(0), kv_write(1), kv_write(2), document]
    threads = [
        threading.Thread(target=written_until_refused, args=(write, count, n))
        for n, write in enumerate(writes)
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while sum(count) < 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    project_delete_by_owner(actor=alice, project_id=board.id)
    for thread in threads:
        thread.join(timeout=60)

    assert sum(count) >= 20 and not any(thread.is_alive() for thread in threads)
    assert board.id not in kv_stored_project_ids(), "nothing of the board is left"


@pytest.mark.django_db(transaction=True)
def test_prune_erases_what_older_versions_left_of_deleted_projects() -> None:
    kept, gone = project_create(name="Kept"), uuid.uuid4()
    for project_id in (kept.id, gone):
        kv_set(dataset=Dataset(project_id), key="k", value=1, source={})
        kv_set(dataset=Dataset(project_id, "kv", "chat-1"), key="k", value=1, source={})
    knowledge_create(project_id=gone, title="Orphan", markdown="# x", source={})
    out = io.StringIO()

    call_command("prune", stdout=out)

    assert kv_stored_project_ids() == {kept.id}
    assert kv_get(dataset=Dataset(kept.id), key="k") is not None
    assert "Erased what 1 deleted projects left" in out.getvalue()
