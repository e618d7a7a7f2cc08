"""The dashboard's Trello import without a browser: the upload answers at once with the job's
page, the worker imports, the page shows the report and the new board; a refused file shows
the refusal there; nobody else sees the job."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from kanban.models import ImportJob, Project
from tests.kanban.jobs.conftest import run_worker, trello_export

pytestmark = pytest.mark.django_db(transaction=True)


def client_of(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def upload(client: Client, data: bytes, *, name: str = "roadmap.json", **fields: str) -> Any:
    return client.post("/imports/trello", {"file": SimpleUploadedFile(name, data), **fields})


def test_the_dashboard_links_to_the_import_page_which_has_an_upload_form(alice: Any) -> None:
    client = client_of(alice)
    assert 'href="/imports/trello"' in client.get("/").content.decode()
    page = client.get("/imports/trello").content.decode()
    assert 'enctype="multipart/form-data"' in page and 'name="dry_run"' in page
    assert "csrfmiddlewaretoken" in page


def test_upload_then_progress_then_the_report_and_a_link_to_the_new_board(alice: Any) -> None:
    client = client_of(alice)
    started = time.monotonic()
    response = upload(client, trello_export(cards=4))
    answered = time.monotonic() - started
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/imports/{job.id}/"
    assert answered < 5, "the upload only stores and enqueues"  # 1 s target, noisy CI
    waiting = client.get(f"/imports/{job.id}/")
    assert "Waiting for a worker" in waiting.content.decode()
    assert "/static/kanban/import-job.js" in waiting.content.decode()
    assert client.get(f"/imports/{job.id}/status").json()["status"] == "queued"

    run_worker()

    status = client.get(f"/imports/{job.id}/status").json()
    assert status["status"] == "succeeded" and status["percent"] == 100
    board = Project.objects.get(id=status["project_id"])
    page = client.get(f"/imports/{job.id}/").content.decode()
    assert f'href="/boards/{board.id}/"' in page and "Open the board Roadmap" in page
    assert 'data-testid="job-counts"' in page
    assert client.get(f"/boards/{board.id}/").status_code == 200


def test_a_file_that_is_not_json_shows_the_refusal_on_the_job_page(alice: Any) -> None:
    client = client_of(alice)
    job_page = upload(client, b"meeting notes, not an export", name="notes.txt")["Location"]
    run_worker()

    page = client.get(job_page).content.decode()
    assert "Refused." in page and 'data-testid="job-error"' in page
    assert "the file is not JSON" in page and "(invalid_argument)" in page
    assert Project.objects.count() == 0


def test_another_user_cannot_see_the_job(alice: Any, bob: Any) -> None:
    job_page = upload(client_of(alice), trello_export())["Location"]
    bob_client = client_of(bob)
    assert bob_client.get(job_page).status_code == 404
    refused = bob_client.get(f"{job_page}status")
    assert refused.status_code == 404 and refused.json()["code"] == "not_found"


def test_a_dry_run_from_the_form_reports_without_a_board(alice: Any) -> None:
    client = client_of(alice)
    job_page = upload(client, trello_export(), dry_run="on")["Location"]
    run_worker()

    page = client.get(job_page).content.decode()
    assert "Dry run finished: nothing was written." in page and "Open the board" not in page
    assert Project.objects.count() == 0


def test_a_file_past_the_limit_or_no_file_is_refused_on_the_form(alice: Any) -> None:
    client = client_of(alice)
    with override_settings(KANBAN_TRELLO_IMPORT_BYTES=10):
        too_large = upload(client, trello_export())
    assert too_large.status_code == 413 and 'role="alert"' in too_large.content.decode()
    assert client.post("/imports/trello", {}).status_code == 400
    assert not ImportJob.objects.exists()


def test_the_job_page_keeps_the_default_policy_no_inline_script(alice: Any) -> None:
    client = client_of(alice)
    job_page = upload(client, trello_export())["Location"]
    response = client.get(job_page)
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert "<script>" not in response.content.decode()
