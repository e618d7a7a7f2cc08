"""Moving in from Trello in the browser: alice uploads her board's export from the dashboard,
watches the job's page while the worker imports it, and opens the board it made; the page's
script runs under the pages' CSP (no inline script), polling until the report is there. A
dry run's page is the mapping step: she says who is who, then imports the kept file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from kanban.models import ImportJob, Project
from tests.browser.helpers import signed_in_page
from tests.factories import a_project, a_user
from tests.kanban.imports.trello_export import TrelloExport
from tests.kanban.jobs.conftest import run_worker, trello_export

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_alice_imports_her_trello_board_from_the_dashboard(
    new_context: Any, live_server: Any, tmp_path: Path
) -> None:
    alice: Any = a_user("alice")
    page: Page = signed_in_page(alice, new_context, live_server)
    refused_by_policy: list[str] = []
    page.on(
        "console",
        lambda message: (
            refused_by_policy.append(message.text)
            if "Content Security Policy" in message.text
            else None
        ),
    )
    export = tmp_path / "roadmap.json"
    export.write_bytes(trello_export(cards=6))

    page.goto("/")
    page.get_by_test_id("import-trello").click()
    page.get_by_label("Trello export (JSON)").set_input_files(str(export))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_test_id("job-status")).to_have_text("Waiting for a worker…")
    assert page.url.endswith(f"/imports/{ImportJob.objects.get().id}/")

    run_worker()

    # The page's poll sees the job end and shows the report, without anyone reloading.
    board_link = page.get_by_test_id("job-board")
    expect(board_link).to_have_text("Open the board Roadmap", timeout=15_000)
    expect(page.get_by_test_id("job-progress")).to_have_attribute("value", "100")
    expect(page.get_by_test_id("job-counts")).to_be_visible()
    board_link.click()
    expect(page).to_have_url(re.compile(rf"/boards/{Project.objects.get().id}/$"))
    assert refused_by_policy == []


def test_alice_says_who_is_who_after_a_dry_run_without_uploading_again(
    new_context: Any, live_server: Any, tmp_path: Path
) -> None:
    alice: Any = a_user("alice")
    carol = a_user("carol")
    a_project(name="Ours", members={alice: "owner", carol: "developer"})
    export = TrelloExport(name="Launch")
    dana = export.member("dana_t", "Dana Ünal")
    export.member("erin", "Erin")
    export.card(export.trello_list("To do"), "Book the venue", idMembers=[dana])
    path = tmp_path / "launch.json"
    path.write_bytes(export.data())
    page: Page = signed_in_page(alice, new_context, live_server)

    page.goto("/imports/trello")
    page.get_by_label("Trello export (JSON)").set_input_files(str(path))
    page.get_by_label("Dry run: show the report and who is who, write nothing").check()
    page.get_by_role("button", name="Import").click()
    run_worker()

    rows = page.get_by_test_id("mapping-row")
    expect(rows).to_have_count(2, timeout=15_000)
    expect(rows.first).to_contain_text("Dana Ünal @dana_t")
    page.get_by_role("combobox", name="Dana Ünal @dana_t").select_option("carol")
    page.get_by_test_id("mapping-form").get_by_role("button", name="Import").click()
    expect(page.get_by_test_id("job-status")).to_have_text("Waiting for a worker…")
    run_worker()

    expect(page.get_by_test_id("job-board")).to_have_text("Open the board Launch", timeout=15_000)
    expect(page.get_by_test_id("job-counts")).to_contain_text("members mapped: 1")
    assert ImportJob.objects.count() == 2 and Project.objects.filter(name="Launch").exists()
