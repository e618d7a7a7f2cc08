"""Starting an import job: the size limit, an empty file, and whose jobs one may see."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from kanban.jobs.imports import MAX_OPEN_JOBS, import_job_get, import_job_start
from kanban.models import ImportJob
from storage.errors import KanbanError
from tests.kanban.jobs.conftest import trello_export

pytestmark = pytest.mark.django_db


def test_a_file_past_the_limit_is_refused_and_no_job_is_made(alice: Any) -> None:
    with override_settings(KANBAN_TRELLO_IMPORT_BYTES=100), pytest.raises(KanbanError) as refused:
        import_job_start(actor=alice, file_name="big.json", data=b"x" * 101)
    assert refused.value.code == "too_large" and "at most 100 bytes" in refused.value.message
    assert not ImportJob.objects.exists()


def test_an_empty_file_is_refused(alice: Any) -> None:
    with pytest.raises(KanbanError) as refused:
        import_job_start(actor=alice, file_name="empty.json", data=b"")
    assert refused.value.code == "invalid_argument"
    assert not ImportJob.objects.exists()


def test_nobody_else_sees_a_job_as_if_it_did_not_exist(alice: Any, bob: Any) -> None:
    job = import_job_start(actor=alice, file_name="roadmap.json", data=trello_export())
    with pytest.raises(KanbanError) as refused:
        import_job_get(actor=bob, job_id=job.id)
    assert refused.value.code == "not_found"
    assert import_job_get(actor=alice, job_id=job.id).file_name == "roadmap.json"


def test_one_person_has_at_most_a_few_imports_waiting_or_running(alice: Any, bob: Any) -> None:
    for number in range(MAX_OPEN_JOBS):
        import_job_start(actor=alice, file_name=f"{number}.json", data=trello_export())
    with pytest.raises(KanbanError) as refused:
        import_job_start(actor=alice, file_name="one-more.json", data=trello_export())
    assert refused.value.code == "rate_limited" and "wait" in refused.value.message
    assert ImportJob.objects.filter(owner=alice).count() == MAX_OPEN_JOBS
    import_job_start(actor=bob, file_name="bobs.json", data=trello_export())
    ImportJob.objects.filter(owner=alice).update(status="succeeded")
    import_job_start(actor=alice, file_name="one-more.json", data=trello_export())
