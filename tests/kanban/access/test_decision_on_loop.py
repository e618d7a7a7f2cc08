"""The access decision fetched on the event loop (PostgreSQL, ``storage.aio``) reaches the
same verdict as the thread path and as the oracle, on the grant matrix's every cell.

One world holds the whole matrix: a consumer and a target per rule case and reciprocity,
and one person per pair of roles, so 2,880 decisions need 30 boards, not 8,640.
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from kanban.access.decision import Op, aaccess_project_data, access_project_data
from kanban.access.grant_rules import Grant
from kanban.access.memberships import membership_set
from kanban.models import Project
from kanban.projects.lifecycle import project_create
from storage import aio
from storage.errors import KanbanError
from tests.factories import a_project, a_reciprocity_case, a_user, users
from tests.kanban.access.test_decision import (
    OPS,
    RECIPROCITY,
    ROLES,
    RULE_CASES,
    expected,
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="reads on the event loop are PostgreSQL's"
    ),
]

Cell = tuple[str, str, str | None, str | None]  # rule case, reciprocity, consumer and target role


def build_world() -> tuple[dict[tuple[str, str], Project], dict[tuple[Any, Any], Any]]:
    people = {
        roles: a_user(f"person-{index}")
        for index, roles in enumerate(itertools.product(ROLES, ROLES))
    }
    elsewhere = project_create(name="C", type="kanban")
    consumers = {}
    for rule_case, reciprocity in itertools.product(RULE_CASES, RECIPROCITY):
        rule = RULE_CASES[rule_case].rule
        grant = Grant(rule, rule, rule, rule, rule)
        consumer = project_create(name=f"A {rule_case} {reciprocity}", type="kanban")
        target = project_create(name=f"B {rule_case} {reciprocity}", type="kanban")
        a_reciprocity_case(consumer, target, elsewhere, reciprocity=reciprocity, grant=grant)
        for (consumer_role, target_role), person in people.items():
            if consumer_role:
                membership_set(user=person, project=consumer, role=consumer_role)
            if target_role:
                membership_set(user=person, project=target, role=target_role)
        consumers[rule_case, reciprocity] = consumer
    return consumers, people


def on_thread(**request: Any) -> str:
    try:
        access_project_data(**request)
    except KanbanError as error:
        return str(error.code)
    return "ok"


async def on_loop(**request: Any) -> str:
    try:
        await aaccess_project_data(**request)
    except KanbanError as error:
        return str(error.code)
    return "ok"


async def test_the_loop_and_the_thread_agree_with_the_oracle_on_the_whole_matrix() -> None:
    consumers, people = await sync_to_async(build_world)()
    disagreements = []
    decided = 0
    for (rule_case, reciprocity), consumer in consumers.items():
        for (consumer_role, target_role), person in people.items():
            for op in OPS:
                key = None if op == "subscribe" else RULE_CASES[rule_case].key
                request = {
                    "user": person,
                    "consumer_id": consumer.id,
                    "alias": "inventory",
                    "op": Op(op),
                    "key": key,
                }
                want = expected(rule_case, reciprocity, consumer_role, target_role, op)
                thread = await sync_to_async(on_thread)(**request)
                loop = await on_loop(**request)
                decided += 1
                if not want == thread == loop:
                    disagreements.append(
                        (rule_case, reciprocity, consumer_role, target_role, op, want, thread, loop)
                    )
    assert decided == 2880
    assert disagreements == []


async def test_the_projects_own_data_and_an_unknown_project_agree_too() -> None:
    def world() -> tuple[Any, Any, Project]:
        alice, bob = users("alice", "bob")
        board = a_project(name="Board", members={alice: "guest"})
        return alice, bob, board

    alice, bob, board = await sync_to_async(world)()
    cases = [
        (alice, board.id, "get", "ok"),
        (alice, board.id, "set", "forbidden"),  # a guest reads only
        (bob, board.id, "get", "not_found"),  # not a member
        (alice, uuid.uuid4(), "get", "not_found"),
        (alice, "not-a-uuid", "get", "not_found"),
    ]
    for user, consumer_id, op, want in cases:
        request = {"user": user, "consumer_id": consumer_id, "alias": None, "op": op, "key": "k"}
        assert await sync_to_async(on_thread)(**request) == want
        assert await on_loop(**request) == want


async def test_a_changed_password_ends_access_on_the_loop_at_once() -> None:
    def world() -> tuple[Any, Project]:
        alice = a_user("alice")
        board = a_project(name="Board", owner=alice)
        return alice, board

    alice, board = await sync_to_async(world)()
    request = {"user": alice, "consumer_id": board.id, "alias": None, "op": "get", "key": "k"}
    assert await on_loop(**request) == "ok"

    def change_password() -> None:
        fresh = type(alice).objects.get(pk=alice.pk)
        fresh.set_password("new one")
        fresh.save()

    await sync_to_async(change_password)()
    assert await on_loop(**request) == "unauthenticated"
    assert aio.reads_on_loop()
