"""People and projects for the REST suites, made with tests/factories.py: alice owns the
board, bob develops on it, charlie is a guest, dave belongs to nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.test import APIClient

from kanban.access.grant_rules import ALL, Grant
from kanban.accounts.tokens import token_create
from kanban.models import Project
from tests.factories import a_project, users


@dataclass
class People:
    alice: Any
    bob: Any
    charlie: Any
    dave: Any


@pytest.fixture
def people(db: None) -> People:
    """Without passwords (hashing four costs seconds per test): these suites sign in by
    session or token, never by password."""
    return People(*users("alice", "bob", "charlie", "dave"))


@pytest.fixture
def board(people: People) -> Project:
    return a_project(
        name="Board",
        owner=people.alice,
        members={people.bob: "developer", people.charlie: "guest"},
    )


READ_WRITE = Grant(read=ALL, write=ALL)


def client_for(user: Any | None, *, token: bool = True) -> APIClient:
    client = APIClient()
    if user is not None:
        if token:
            _, plaintext = token_create(user=user)
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
        else:
            client.force_login(user)
    return client
