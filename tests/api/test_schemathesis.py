"""Property-based requests generated from our own OpenAPI schema (schemathesis): whatever
the body, key or parameters, the API answers with a stable error and never a 5xx."""

from __future__ import annotations

import os
from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings

from kanban.access.grant_rules import ALL, Grant
from kanban.accounts.tokens import token_create
from tests.factories import a_board_and_inventory, a_user

#: Generated requests an operation. The README's command (the development loop) makes 10;
#: .ci/run's PostgreSQL + Redis pass sets 25.
EXAMPLES = int(os.environ.get("KANBAN_FUZZ_EXAMPLES", "10"))

schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", get_wsgi_application())
CODES = {
    "invalid_argument",
    "unauthenticated",
    "forbidden",
    "not_found",
    "unknown_alias",
    "relationship_pending",
    "conflict",
    "too_large",
    "rate_limited",
}


@pytest.fixture(autouse=True)
def keep_the_test_connection_open() -> Any:
    """Django's test client stops requests from closing the test's database connection;
    schemathesis calls the WSGI app directly, so do the same here."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def caller(db: None) -> dict[str, Any]:
    """Bob, a developer of a board related to an inventory, with an API token."""
    bob = a_user("bob")
    board, _ = a_board_and_inventory(members={bob: "developer"}, grant=Grant(read=ALL, write=ALL))
    _, token = token_create(user=bob)
    return {"token": token, "board": str(board.id)}


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_the_api_never_answers_with_a_server_error(case: Any, caller: dict[str, Any]) -> None:
    if case.path_parameters and "project_id" in case.path_parameters:
        # Aim most requests at a real board so they get past "not found".
        case.path_parameters["project_id"] = caller["board"]
        if "alias" in case.path_parameters:
            case.path_parameters["alias"] = "inventory"
    response = case.call(headers={"Authorization": f"Bearer {caller['token']}"})
    assert response.status_code < 500, (case.method, case.formatted_path, response.text[:300])
    if response.status_code >= 400 and response.headers.get("Content-Type", "").startswith(
        "application/json"
    ):
        body = response.json()
        assert body.get("code") in CODES, body
        assert isinstance(body.get("message"), str)
