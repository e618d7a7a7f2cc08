"""Token usage (seed 000): the runtime writes cumulative totals into each project's KV (and a
conversation's); the server shows them per project and sums them for the system total,
keeping nothing of its own."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from kanban.data.token_usage import USAGE_KEY
from kanban.models import Project
from storage import engine
from tests.api.conftest import People, client_for
from tests.factories import a_project

pytestmark = pytest.mark.django_db


def record(people: People, project: Project, totals: Any, conversation: str | None = None) -> None:
    """What the runtime does after a run: replace the cumulative totals."""
    project_kv_set(
        target=Target(user=people.alice, project_id=project.id, conversation_id=conversation),
        key=USAGE_KEY,
        value=totals,
        provenance=Provenance(via="api"),
    )


RUN = {
    "inputTokens": 120,
    "outputTokens": 80,
    "reasoningTokens": 12,
    "cachedInputTokens": 40,
    "cacheCreationTokens": 16,
    "calls": 1,
}


def test_a_project_and_a_conversation_show_their_totals(people: People, board: Project) -> None:
    record(people, board, {**RUN, "calls": 3})
    record(people, board, RUN, conversation="conv-1")
    bob = client_for(people.bob)

    project = bob.get(f"/api/v1/projects/{board.id}/token-usage").json()
    assert project == {**RUN, "calls": 3, "totalTokens": 200, "malformed": False}
    one = bob.get(f"/api/v1/projects/{board.id}/token-usage", {"conversationId": "conv-1"})
    assert one.json()["calls"] == 1
    untouched = a_project(name="Quiet", members={people.bob: "guest"})
    assert bob.get(f"/api/v1/projects/{untouched.id}/token-usage").json()["totalTokens"] == 0
    outsider = client_for(people.dave).get(f"/api/v1/projects/{board.id}/token-usage")
    assert outsider.status_code == 404


def test_the_system_total_is_the_sum_of_the_projects_and_nothing_is_stored_for_it(
    people: People, board: Project
) -> None:
    other = a_project(name="Other", owner=people.alice)
    record(people, board, RUN)
    record(people, other, {**RUN, "inputTokens": 1000, "calls": 4})
    broken = a_project(name="Broken", owner=people.alice)
    record(people, broken, {"inputTokens": "lots"})
    people.alice.is_staff = people.alice.is_superuser = True
    people.alice.save()
    before = last_seq()

    system = client_for(people.alice).get("/api/v1/token-usage").json()

    assert system["total"]["inputTokens"] == 1120 and system["total"]["calls"] == 5
    assert system["total"]["malformed"] is True
    by_name = {row["name"]: row for row in system["projects"]}
    assert by_name["Broken"]["malformed"] is True and by_name["Broken"]["inputTokens"] == 0
    assert last_seq() == before, "reading wrote nothing: no write of any key took a revision"
    assert client_for(people.bob).get("/api/v1/token-usage").status_code == 403

    staff = Client()
    staff.force_login(people.alice)
    page = staff.get("/admin/kanban/project/token-usage/").content.decode()
    assert "<td>1120</td>" in page and "System" in page and USAGE_KEY in page
    assert "not an object of counters" in page


def last_seq() -> int:
    """The highest revision the store ever handed out: any write at all moves it (the
    emptiness of the store could not see one more record)."""
    with engine.driver_cursor("default") as (dialect, cursor):
        return dialect.last_seq(cursor)


@pytest.mark.parametrize("count", [2**53, 2**63, 10**300, -1, 1.5, True])
def test_a_counter_past_what_a_json_number_holds_exactly_counts_zero_and_is_flagged(
    people: People, board: Project, count: Any
) -> None:
    record(people, board, {**RUN, "outputTokens": count})
    usage = client_for(people.alice).get(f"/api/v1/projects/{board.id}/token-usage").json()
    assert usage["outputTokens"] == 0 and usage["malformed"] is True
    record(people, board, {**RUN, "outputTokens": 2**53 - 1})
    usage = client_for(people.alice).get(f"/api/v1/projects/{board.id}/token-usage").json()
    assert usage["outputTokens"] == 2**53 - 1 and usage["malformed"] is False
