"""Readable people and projects for the kanban tests: alice, bob and charlie, project
factories, and a helper that declares both sides of a relationship."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol
from uuid import UUID, uuid4

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser

from kanban.access.events import ACCESS_CHANGED, AccessChanged
from kanban.access.relationships import Grant, Rule, relationship_declare
from kanban.models import Project
from kanban.projects.lifecycle import project_create

User = get_user_model()


def make_user(username: str, **flags: Any) -> AbstractUser:
    # No password: hashing one costs a noticeable fraction of a second per user.
    return User.objects.create_user(username=username, password=None, **flags)  # type: ignore[no-any-return]


@pytest.fixture
def alice(db: None) -> AbstractUser:
    return make_user("alice")


@pytest.fixture
def bob(db: None) -> AbstractUser:
    return make_user("bob")


@pytest.fixture
def charlie(db: None) -> AbstractUser:
    return make_user("charlie")


class MakeProject(Protocol):
    def __call__(
        self, name: str = ..., *, type: str = ..., project_id: UUID | None = ...
    ) -> Project: ...


@pytest.fixture
def make_project(db: None) -> MakeProject:
    def make(
        name: str = "Board", *, type: str = "kanban", project_id: UUID | None = None
    ) -> Project:
        return project_create(name=name, type=type, project_id=project_id)

    return make


def declare(
    project: Project, alias: str, target: Project | UUID, grant: Grant | None = None
) -> None:
    """``project`` declares ``target`` under ``alias``, granting it ``grant``."""
    target_id = target.id if isinstance(target, Project) else target
    relationship_declare(project=project, alias=alias, project_id=target_id, grant=grant)


def relate(
    a: Project,
    b: Project,
    *,
    a_calls_b: str,
    b_calls_a: str,
    a_grants_b: Grant | None = None,
    b_grants_a: Grant | None = None,
) -> None:
    """Declare both sides: a confirmed relationship."""
    declare(a, a_calls_b, b, a_grants_b)
    declare(b, b_calls_a, a, b_grants_a)


def declare_reciprocity(
    consumer: Project, target: Project, elsewhere: Project, *, reciprocity: str, grant: Grant
) -> None:
    """Set up one of the grant matrix's reciprocity cases: the consumer calls the target
    ``inventory``; the target grants ``grant`` back under ``shop``, or to ``elsewhere``, or
    never hears of the consumer. The consumer's own grant is all "none": it must not matter
    for the consumer's access to the target."""
    nothing = Grant(*(Rule("none"),) * 5)
    if reciprocity in {"confirmed", "only-consumer-declares", "target-points-elsewhere"}:
        declare(consumer, "inventory", target, nothing)
    if reciprocity in {"confirmed", "only-target-declares"}:
        declare(target, "shop", consumer, grant)
    if reciprocity == "target-points-elsewhere":
        declare(target, "other", elsewhere, grant)
    if reciprocity == "target-missing":
        declare(consumer, "inventory", uuid4(), nothing)


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
