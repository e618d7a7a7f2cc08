"""Readable people and projects for the kanban tests: alice, bob and charlie, and a project
factory, as fixtures over tests/factories.py (which also declares relationships)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol
from uuid import UUID

import pytest
from django.contrib.auth.models import AbstractUser

from kanban.access.events import ACCESS_CHANGED, AccessChanged
from kanban.models import Project
from tests.factories import a_project, a_user


@pytest.fixture
def alice(db: None) -> AbstractUser:
    return a_user("alice")


@pytest.fixture
def bob(db: None) -> AbstractUser:
    return a_user("bob")


@pytest.fixture
def charlie(db: None) -> AbstractUser:
    return a_user("charlie")


class MakeProject(Protocol):
    def __call__(
        self, name: str = ..., *, type: str = ..., project_id: UUID | None = ...
    ) -> Project: ...


@pytest.fixture
def make_project(db: None) -> MakeProject:
    def make(
        name: str = "Board", *, type: str = "kanban", project_id: UUID | None = None
    ) -> Project:
        return a_project(name=name, type=type, project_id=project_id)

    return make


@pytest.fixture
def access_events() -> Iterator[list[AccessChanged]]:
    """Every access-changed event delivered while the test runs."""
    seen: list[AccessChanged] = []
    remove = ACCESS_CHANGED.listen(seen.append)
    yield seen
    remove()


@pytest.fixture
def committing(django_capture_on_commit_callbacks: Callable[..., Any]) -> Callable[..., Any]:
    """Run a block so that its on_commit callbacks fire as if the test's transaction
    committed (the test itself runs inside a transaction that is rolled back)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)
