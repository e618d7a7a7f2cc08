"""An agent's REST write names its run and its conversation in two headers; both, and the
token's prefix, are kept in the value's write source and shown in the KV viewer."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from kanban.accounts.tokens import token_create
from kanban.models import Project
from storage import engine
from storage.namespaces import dataset_value
from tests.api.conftest import People
from tests.api.test_token_scope import with_token

pytestmark = pytest.mark.django_db


def test_the_run_and_conversation_headers_are_kept_with_the_write_and_shown(
    people: People, board: Project
) -> None:
    _, plaintext = token_create(user=people.bob, project_id=board.id)
    answer = with_token(plaintext).put(
        f"/api/v1/projects/{board.id}/kv/plan",
        data=json.dumps({"value": "ship it"}),
        content_type="application/json",
        headers={"X-Run-Id": "run-42", "X-Conversation-Id": "conv-9"},
    )
    assert answer.status_code == 200

    stored = engine.get_value(dataset_value(board.id, "kv", "plan"))
    assert stored is not None and stored.source is not None
    assert stored.source["via"] == "api"
    assert (stored.source["runId"], stored.source["conversationId"]) == ("run-42", "conv-9")
    assert stored.source["token"] == plaintext[:10]

    people.alice.is_staff = people.alice.is_superuser = True
    people.alice.save()
    staff = Client()
    staff.force_login(people.alice)
    html = staff.get(
        "/admin/kanban/project/kv-viewer/", {"project": str(board.id)}
    ).content.decode()
    for label, text in [
        ("consumer project", str(board.id)),
        ("run", "run-42"),
        ("conversation", "conv-9"),
        ("token", plaintext[:10]),
    ]:
        assert f"<dt>{label}</dt><dd>{text}</dd>" in html


def test_a_run_id_past_its_limit_is_refused_and_nothing_is_written(
    people: People, board: Project
) -> None:
    _, plaintext = token_create(user=people.bob)
    answer = with_token(plaintext).put(
        f"/api/v1/projects/{board.id}/kv/plan",
        data=json.dumps({"value": 1}),
        content_type="application/json",
        headers={"X-Run-Id": "r" * 257},
    )
    assert answer.status_code == 400 and answer.json()["code"] == "invalid_argument"
    assert engine.get_value(dataset_value(board.id, "kv", "plan")) is None


def test_the_schema_documents_the_headers_on_writes(people: People) -> None:
    schema = Client().get("/api/v1/schema/", {"format": "json"}).json()
    put = schema["paths"]["/api/v1/projects/{project_id}/kv/{key}"]["put"]
    headers = {p["name"] for p in put["parameters"] if p["in"] == "header"}
    assert headers == {"X-Run-Id", "X-Conversation-Id"}
