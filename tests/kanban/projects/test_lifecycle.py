"""Deleting a project takes its data with it (red team, Low 7: a re-imported package with
the same UUID, even a different one, inherited the deleted project's KV)."""

from __future__ import annotations

from typing import Any

import pytest

from kanban.projects.lifecycle import project_create, project_delete
from storage.knowledge import knowledge_create, knowledge_list
from storage.kv import Dataset, kv_get, kv_set
from tests.factories import a_user

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
    assert sorted(outcomes) == ["made"] * 3 + ["too_large"] * 5
    assert Membership.objects.filter(user=dave, role="owner").count() == 3
