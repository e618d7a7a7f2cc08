"""An import job run by django-tasks' database worker: queued by the upload, run with its
progress visible while the import's transaction is still open, ended with the report or the
refusal, retried a bounded number of times when it fails unexpectedly."""

from __future__ import annotations

from typing import Any

import pytest
from django_tasks_db.models import DBTaskResult

from kanban.jobs import tasks
from kanban.jobs.imports import import_job_get, import_job_start
from kanban.models import ImportJob, ImportUpload, Membership, Project
from tests.kanban.jobs.conftest import count_of, run_worker, trello_export

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_upload_is_queued_as_a_task_row_and_the_worker_imports_it(alice: Any) -> None:
    job = import_job_start(actor=alice, file_name="roadmap.json", data=trello_export(cards=3))
    assert job.status == "queued" and DBTaskResult.objects.filter(status="READY").count() == 1
    assert Project.objects.count() == 0

    run_worker()

    done = import_job_get(actor=alice, job_id=job.id)
    assert done.status == "succeeded" and done.percent == 100
    assert done.report is not None and count_of(done.report, "cards") == 3
    board = Project.objects.get(id=done.project_id)
    assert board.name == "Roadmap"
    assert Membership.objects.get(project=board).user == alice
    assert DBTaskResult.objects.get().status == "SUCCESSFUL"
    assert not ImportUpload.objects.exists(), "the upload is kept only until the job ends"


def test_progress_is_visible_while_the_import_runs(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, int, int]] = []
    report_progress = tasks.ProgressReporter.__call__

    def watched(reporter: tasks.ProgressReporter, done: int, total: int) -> None:
        report_progress(reporter, done, total)
        job = import_job_get(actor=alice, job_id=reporter.job_id)
        seen.append((job.status, job.done, job.total))

    monkeypatch.setattr(tasks.ProgressReporter, "__call__", watched)
    monkeypatch.setattr("kanban.jobs.progress.EVERY_SECONDS", 0)
    job = import_job_start(actor=alice, file_name="roadmap.json", data=trello_export(cards=5))
    run_worker()

    assert seen, "the import reported no progress"
    assert all(status == "running" for status, _, _ in seen)
    _, last_done, last_total = seen[-1]
    assert last_done == last_total > 0
    assert [done for _, done, _ in seen] == sorted(done for _, done, _ in seen)
    assert import_job_get(actor=alice, job_id=job.id).status == "succeeded"


def test_a_file_that_is_not_json_ends_the_job_refused_and_imports_nothing(alice: Any) -> None:
    job = import_job_start(actor=alice, file_name="notes.txt", data=b"meeting notes, not JSON")
    run_worker()

    refused = import_job_get(actor=alice, job_id=job.id)
    assert refused.status == "failed" and refused.error is not None
    assert refused.error["code"] == "invalid_argument" and "JSON" in refused.error["message"]
    assert ImportJob.objects.get().attempts == 1, "a refusal is the answer, never retried"
    assert Project.objects.count() == 0


def test_a_run_that_fails_unexpectedly_is_retried_and_then_succeeds(
    alice: Any, monkeypatch: pytest.MonkeyPatch, no_retry_delay: None
) -> None:
    import kanban.imports.trello as trello

    real, calls = trello.trello_import, []

    def flaky(**kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("the database went away")
        return real(**kwargs)

    monkeypatch.setattr(trello, "trello_import", flaky)
    job = import_job_start(actor=alice, file_name="roadmap.json", data=trello_export())
    run_worker()

    assert len(calls) == 2
    assert import_job_get(actor=alice, job_id=job.id).status == "succeeded"
    assert ImportJob.objects.get().attempts == 2
    assert Project.objects.count() == 1


def test_retries_are_bounded_and_the_last_failure_is_told_and_kept_for_the_operator(
    alice: Any, monkeypatch: pytest.MonkeyPatch, no_retry_delay: None
) -> None:
    import kanban.imports.trello as trello

    def broken(**kwargs: Any) -> Any:
        raise ConnectionError("the database went away")

    monkeypatch.setattr(trello, "trello_import", broken)
    job = import_job_start(actor=alice, file_name="roadmap.json", data=trello_export())
    run_worker()

    failed = import_job_get(actor=alice, job_id=job.id)
    assert failed.status == "failed" and failed.error is not None
    assert failed.error["code"] == "unavailable"
    assert ImportJob.objects.get().attempts == tasks.MAX_ATTEMPTS
    results = DBTaskResult.objects.order_by("enqueued_at")
    assert [r.status for r in results] == ["SUCCESSFUL"] * (tasks.MAX_ATTEMPTS - 1) + ["FAILED"]
    assert "ConnectionError" in results.last().exception_class_path  # type: ignore[union-attr]


def test_a_retry_waits_before_it_runs_again(alice: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import kanban.imports.trello as trello

    def broken(**kwargs: Any) -> Any:
        raise ConnectionError("the database went away")

    monkeypatch.setattr(trello, "trello_import", broken)
    import_job_start(actor=alice, file_name="roadmap.json", data=trello_export())
    run_worker()

    assert ImportJob.objects.get().status == "queued"
    assert ImportJob.objects.get().attempts == 1
    waiting = DBTaskResult.objects.get(status="READY")
    assert waiting.run_after is not None


def test_a_dry_run_reports_and_makes_no_board(alice: Any) -> None:
    job = import_job_start(actor=alice, file_name="r.json", data=trello_export(), dry_run=True)
    run_worker()

    done = import_job_get(actor=alice, job_id=job.id)
    assert done.status == "succeeded" and done.report is not None and done.project_id is None
    assert Project.objects.count() == 0


def test_a_job_its_worker_died_in_runs_again_when_the_embedded_worker_starts(alice: Any) -> None:
    job = import_job_start(actor=alice, file_name="roadmap.json", data=trello_export())
    # What a worker killed mid-import leaves: its task and the job both still running.
    DBTaskResult.objects.update(status="RUNNING")
    ImportJob.objects.update(status="running", attempts=1)

    assert tasks.import_jobs_resume() == 1
    run_worker()

    done = import_job_get(actor=alice, job_id=job.id)
    assert done.status == "succeeded" and ImportJob.objects.get().attempts == 2
    assert sorted(r.status for r in DBTaskResult.objects.all()) == ["FAILED", "SUCCESSFUL"]


def test_a_job_interrupted_on_its_last_run_ends_failed(alice: Any) -> None:
    job = import_job_start(actor=alice, file_name="roadmap.json", data=trello_export())
    DBTaskResult.objects.update(status="RUNNING")
    ImportJob.objects.update(status="running", attempts=tasks.MAX_ATTEMPTS)

    assert tasks.import_jobs_resume() == 0
    failed = import_job_get(actor=alice, job_id=job.id)
    assert failed.status == "failed" and failed.error is not None
    assert failed.error["code"] == "unavailable"
    assert not DBTaskResult.objects.filter(status__in=["READY", "RUNNING"]).exists()
