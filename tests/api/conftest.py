"""People and projects for the REST suites: alice owns the board, bob develops on it,
charlie is a guest, dave belongs to nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from kanban.access.memberships import membership_set
from kanban.access.relationships import ALL, Grant, relationship_declare
from kanban.accounts.tokens import token_create
from kanban.models import Project
from kanban.projects.lifecycle import project_create


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
    make = get_user_model().objects.create_user
    return People(*(make(name) for name in ("alice", "bob", "charlie", "dave")))


@pytest.fixture
def board(people: People) -> Project:
    project = project_create(name="Board")
    membership_set(user=people.alice, project=project, role="owner")
    membership_set(user=people.bob, project=project, role="developer")
    membership_set(user=people.charlie, project=project, role="guest")
    return project


def declare_both(a: Project, b: Project, *, a_alias: str, b_alias: str, grant: Grant) -> None:
    """Reciprocal declarations, each side granting ``grant`` to the other."""
    relationship_declare(project=a, alias=a_alias, project_id=b.id, grant=grant)
    relationship_declare(project=b, alias=b_alias, project_id=a.id, grant=grant)


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
