"""Scoped tokens over REST: one project, read-only or not, until they expire; the user's own
role still applies on top."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from kanban.accounts.tokens import token_create
from kanban.models import ApiToken, Project
from tests.api.conftest import People
from tests.factories import a_project

pytestmark = pytest.mark.django_db


def with_token(plaintext: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


def put(client: APIClient, where: str, value: Any) -> Any:
    return client.put(where, data=json.dumps({"value": value}), content_type="application/json")


def kv(project: Project, key: str = "k") -> str:
    return f"/api/v1/projects/{project.id}/kv/{key}"


def test_a_project_scoped_token_reaches_that_project_only(people: People, board: Project) -> None:
    other = a_project(name="Other", members={people.bob: "developer"})
    _, plaintext = token_create(user=people.bob, project_id=board.id)
    client = with_token(plaintext)

    assert put(client, kv(board), 1).status_code == 200
    refused = put(client, kv(other), 1)
    assert refused.status_code == 404 and refused.json()["code"] == "not_found"
    assert client.get("/api/v1/projects/").status_code == 404  # names no project
    assert client.get(kv(board)).json()["value"] == 1


def test_a_read_only_token_reads_and_batch_reads_but_writes_nothing(
    people: People, board: Project
) -> None:
    _, plaintext = token_create(user=people.bob, project_id=board.id, scope="read")
    client = with_token(plaintext)

    refused = put(client, kv(board), 1)
    assert refused.status_code == 403 and refused.json()["message"] == "this token is read-only"
    assert client.delete(kv(board)).status_code == 403
    batch = client.post(
        f"/api/v1/projects/{board.id}/kv:batchGet",
        data=json.dumps({"keys": ["k"]}),
        content_type="application/json",
    )
    assert batch.status_code == 200
    assert client.get(kv(board)).status_code == 404  # read, and nothing is there


def test_an_expired_token_is_unauthenticated(people: People, board: Project) -> None:
    token, plaintext = token_create(user=people.bob, lifetime=timedelta(hours=1))
    assert with_token(plaintext).get(kv(board)).status_code == 404
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now())
    answer = with_token(plaintext).get(kv(board))
    assert answer.status_code == 401 and answer.json()["code"] == "unauthenticated"


def test_create_token_prints_the_token_last_and_refuses_a_bad_scope_or_lifetime(
    people: People, board: Project
) -> None:
    out = io.StringIO()
    call_command(
        "create_token",
        "bob",
        "--project",
        str(board.id),
        "--scope",
        "read",
        "--expires",
        "2h",
        stdout=out,
    )
    plaintext = out.getvalue().strip().splitlines()[-1]
    token = ApiToken.objects.get(prefix=plaintext[:10])
    assert (token.project_id, token.scope) == (board.id, "read")
    assert token.expires_at is not None
    assert timedelta(minutes=119) < token.expires_at - timezone.now() <= timedelta(hours=2)

    with pytest.raises(CommandError, match="a lifetime is"):
        call_command("create_token", "bob", "--expires", "soon", stdout=io.StringIO())
    with pytest.raises(CommandError, match="at most a year"):
        call_command("create_token", "bob", "--expires", "400d", stdout=io.StringIO())
    outsider = a_project(name="Elsewhere")
    with pytest.raises(CommandError, match="is not on a project"):
        call_command("create_token", "bob", "--project", str(outsider.id), stdout=io.StringIO())

    second = a_project(name="Second", owner=people.bob)
    out = io.StringIO()
    call_command(
        "create_token", "bob", "--project", str(board.id), "--project", str(second.id), stdout=out
    )
    both = ApiToken.objects.get(prefix=out.getvalue().strip().splitlines()[-1][:10])
    assert (both.project_id, [p.id for p in both.more_projects.all()]) == (board.id, [second.id])
    with pytest.raises(CommandError, match="an MCP token names one board"):
        call_command(
            "create_token",
            "bob",
            *("--project", str(board.id), "--project", str(second.id), "--scope", "mcp"),
            stdout=io.StringIO(),
        )

    call_command("revoke_token", plaintext, stdout=io.StringIO())
    assert with_token(plaintext).get(kv(board)).status_code == 401
    with pytest.raises(CommandError, match="no live token"):
        call_command("revoke_token", plaintext, stdout=io.StringIO())
