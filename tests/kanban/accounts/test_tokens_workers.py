"""A revoked token is refused at once by every worker: two daphne workers on the test
database answer the token, and both refuse it from the request after its revocation (each
request looks its token up in the database; nothing caches it)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from kanban.accounts.tokens import token_create, token_revoke_own
from tests.factories import a_project
from tests.live import LiveServer

pytestmark = pytest.mark.django_db(transaction=True)


def get(server: LiveServer, path: str, token: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        server.url + path, headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as refused:
        return refused.code, json.load(refused)


def test_a_revoked_token_is_refused_by_every_worker_at_once(
    alice: Any, live_servers: Callable[..., list[LiveServer]]
) -> None:
    board = a_project(name="Roadmap", owner=alice)
    token, plaintext = token_create(user=alice, project_id=board.id, scope="read")
    workers = live_servers(2)
    path = f"/api/v1/projects/{board.id}/"
    assert [get(worker, path, plaintext)[0] for worker in workers] == [200, 200]

    token_revoke_own(user=alice, token_id=token.id)

    for worker in workers:
        status, body = get(worker, path, plaintext)
        assert status == 401
        assert body == {"code": "unauthenticated", "message": "invalid, expired or revoked token"}
