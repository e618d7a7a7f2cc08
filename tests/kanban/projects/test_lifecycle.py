"""Deleting a project takes its data with it (red team, Low 7: a re-imported package with
the same UUID, even a different one, inherited the deleted project's KV)."""

from __future__ import annotations

import pytest

from kanban.projects.lifecycle import project_create, project_delete
from storage.knowledge import knowledge_create, knowledge_list
from storage.kv import Dataset, kv_get, kv_set

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
