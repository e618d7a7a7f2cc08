"""The import page's second step and its other file: a dry run says which Trello members no
user here stands for and keeps the file, so alice maps each to a person (or keeps them by
name) and imports it without uploading again; a board archive goes through the same
upload, job and report."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest

from kanban.data.board import layout
from kanban.data.kv import project_kv_get
from kanban.data.target import Target
from kanban.imports.board_export import board_export
from kanban.jobs.imports import (
    import_job_get,
    import_job_run_mapped,
    import_job_start,
    mapping_candidates,
)
from kanban.models import ImportJob, ImportUpload, Project
from storage.errors import KanbanError
from tests.factories import a_project, a_user
from tests.kanban.imports.trello_export import TrelloExport
from tests.kanban.jobs.conftest import count_of, run_worker, trello_export

pytestmark = pytest.mark.django_db(transaction=True)


def team_export() -> tuple[TrelloExport, str, str]:
    """dana_t and erin are no users here; the card is dana's."""
    export = TrelloExport(name="Launch")
    dana = export.member("dana_t", "Dana Ünal")
    erin = export.member("erin", "Erin")
    todo = export.trello_list("To do")
    export.card(todo, "Book the venue", idMembers=[dana])
    return export, dana, erin


def test_a_dry_run_names_the_unmatched_members_and_keeps_its_file(alice: Any) -> None:
    export, dana, erin = team_export()
    job = import_job_start(actor=alice, file_name="launch.json", data=export.data(), dry_run=True)
    run_worker()

    done = import_job_get(actor=alice, job_id=job.id)
    assert done.importable and done.report is not None
    assert [(m["id"], m["username"]) for m in done.report["unmatched"]] == [
        (dana, "dana_t"),
        (erin, "erin"),
    ]
    assert ImportUpload.objects.filter(job_id=job.id).exists()
    assert not Project.objects.exists()


def test_alice_maps_dana_to_carol_keeps_erin_by_name_and_imports(alice: Any, bob: Any) -> None:
    carol = a_user("carol")
    a_project(name="Ours", members={alice: "owner", carol: "developer"})
    assert mapping_candidates(actor=alice) == ["alice", "carol"]
    export, dana, _ = team_export()
    dry = import_job_start(actor=alice, file_name="launch.json", data=export.data(), dry_run=True)
    run_worker()

    job = import_job_run_mapped(actor=alice, job_id=dry.id, mapping={dana: "carol"})
    assert job.file_name == "launch.json" and not job.dry_run
    assert not ImportUpload.objects.filter(job_id=dry.id).exists(), "the file moved on"
    run_worker()

    done = import_job_get(actor=alice, job_id=job.id)
    assert done.status == "succeeded" and done.report is not None
    assert count_of(done.report, "members mapped") == 1
    assert [m["username"] for m in done.report["unmatched"]] == ["erin"]
    assert done.project_id is not None
    board_id = UUID(done.project_id)
    index = project_kv_get(target=Target(user=alice, project_id=board_id), key=layout.INDEX_KEY)
    assert index is not None
    card = project_kv_get(
        target=Target(user=alice, project_id=board_id), key=layout.card_key(index.value[0])
    )
    assert card is not None and card.value["assignees"] == ["carol"]
    assert ImportJob.objects.get(id=job.id).options == {"mapping": {dana: "carol"}}


def test_a_mapping_to_nobody_or_of_a_stranger_is_refused_and_starts_nothing(alice: Any) -> None:
    export, dana, _ = team_export()
    dry = import_job_start(actor=alice, file_name="launch.json", data=export.data(), dry_run=True)
    run_worker()

    for mapping, said in (
        ({dana: "zed"}, "'zed' is no user here"),
        ({"not-a-member": "alice"}, "no member of this export"),
    ):
        with pytest.raises(KanbanError) as refused:
            import_job_run_mapped(actor=alice, job_id=dry.id, mapping=mapping)
        assert refused.value.code == "invalid_argument" and said in refused.value.message
    assert ImportJob.objects.count() == 1


def test_only_the_owner_imports_a_dry_run_and_a_new_upload_ends_the_kept_file(
    alice: Any, bob: Any
) -> None:
    export, _, _ = team_export()
    dry = import_job_start(actor=alice, file_name="launch.json", data=export.data(), dry_run=True)
    run_worker()
    with pytest.raises(KanbanError) as refused:
        import_job_run_mapped(actor=bob, job_id=dry.id, mapping={})
    assert refused.value.code == "not_found"

    import_job_start(actor=alice, file_name="other.json", data=trello_export())
    with pytest.raises(KanbanError) as refused:
        import_job_run_mapped(actor=alice, job_id=dry.id, mapping={})
    assert refused.value.code == "not_found" and "upload it again" in refused.value.message


def test_a_board_archive_is_imported_by_the_same_job(alice: Any) -> None:
    job = import_job_start(actor=alice, file_name="roadmap.json", data=trello_export(cards=4))
    run_worker()
    first = import_job_get(actor=alice, job_id=job.id)
    assert first.project_id is not None
    archive = board_export(actor=alice, project_id=UUID(first.project_id))

    job = import_job_start(actor=alice, file_name="roadmap.zip", data=archive, kind="archive")
    run_worker()

    done = import_job_get(actor=alice, job_id=job.id)
    assert done.kind == "archive" and done.status == "succeeded", done.error
    assert done.percent == 100 and done.report is not None
    assert done.project_id is not None and done.project_id != first.project_id
    assert Project.objects.get(id=done.project_id).name == "Roadmap"


def test_a_file_that_is_no_board_archive_is_the_jobs_refusal(alice: Any) -> None:
    job = import_job_start(actor=alice, file_name="x.zip", data=b"not a zip", kind="archive")
    run_worker()
    done = import_job_get(actor=alice, job_id=job.id)
    assert done.status == "failed" and done.error is not None
    assert done.error["code"] == "invalid_argument"
    assert Project.objects.count() == 0
