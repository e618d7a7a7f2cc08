"""M4 over REST: a project's storage quota, the owner's purge of a key's kept versions, and
one person's write-bytes rate."""

from __future__ import annotations

from typing import Any

import pytest

from kanban.models import Project
from kanban.quotas import deployment as quotas
from storage.kv import kv_project_bytes
from tests.api.conftest import People, client_for
from tests.api.test_kv_api import assert_error, kv_url, put

pytestmark = pytest.mark.django_db

#: About a megabyte of JSON text, as the reproduction's PUTs.
MEGABYTE = "x" * (2**20 - 100)


def history_url(project: Project, key: str) -> str:
    return f"/api/v1/projects/{project.id}/history/kv/{key}"


@pytest.fixture(autouse=True)
def fresh_write_budgets() -> None:
    quotas.write_bytes_reset(shared_too=True)


def test_megabyte_puts_are_refused_once_the_project_is_full_and_write_nothing(
    people: People, board: Project, settings: Any
) -> None:
    """M4: 20 PUTs of ~1 MB to one key grew the database by 43 MB."""
    settings.KANBAN_PROJECT_BYTES = 6 * 2**20
    bob = client_for(people.bob)
    url = kv_url(board, "blob")
    statuses = [put(bob, url, {"value": MEGABYTE + str(n % 10)}).status_code for n in range(8)]
    assert statuses[:2] == [200, 200] and statuses[-1] == 409
    used = kv_project_bytes(project_id=board.id)
    assert used <= settings.KANBAN_PROJECT_BYTES
    refused = put(bob, url, {"value": MEGABYTE + "!"})
    assert_error(refused, 409, "quota_exceeded")
    body = refused.json()
    assert body["limit"] == settings.KANBAN_PROJECT_BYTES and str(body["limit"]) in body["message"]
    assert bob.get(url).json()["value"] != MEGABYTE + "!"
    assert kv_project_bytes(project_id=board.id) == used


def test_a_deleted_keys_versions_count_until_the_owner_purges_them(
    people: People, board: Project, settings: Any
) -> None:
    settings.KANBAN_PROJECT_BYTES = 4 * 2**20
    alice, bob = client_for(people.alice), client_for(people.bob)
    url = kv_url(board, "blob")
    assert put(bob, url, {"value": MEGABYTE}).status_code == 200
    assert bob.delete(url).json() == {"deleted": True}
    assert kv_project_bytes(project_id=board.id) == len(MEGABYTE) + 2  # its kept version
    assert_error(bob.delete(history_url(board, "blob")), 403, "forbidden")
    assert alice.delete(history_url(board, "blob")).json() == {"purged": 2}
    assert kv_project_bytes(project_id=board.id) == 0
    assert alice.get(history_url(board, "blob")).json()["entries"] == []


def test_one_persons_write_bytes_are_rate_limited_and_nothing_is_written(
    people: People, board: Project, settings: Any
) -> None:
    settings.KANBAN_WRITE_BYTES_PER_USER = 1000.0
    settings.KANBAN_WRITE_BYTES_BURST = 3 * 2**20
    bob = client_for(people.bob)
    statuses = [put(bob, kv_url(board, f"k{n}"), {"value": MEGABYTE}).status_code for n in range(4)]
    assert statuses == [200, 200, 200, 429]
    assert_error(put(bob, kv_url(board, "k4"), {"value": MEGABYTE}), 429, "rate_limited")
    assert_error(bob.get(kv_url(board, "k4")), 404, "not_found")
    alice = client_for(people.alice)  # her own budget
    assert put(alice, kv_url(board, "a"), {"value": MEGABYTE}).status_code == 200
    # The budget is in bytes: what is left of bob's still takes a small value.
    assert put(bob, kv_url(board, "small"), {"value": 1}).status_code == 200
