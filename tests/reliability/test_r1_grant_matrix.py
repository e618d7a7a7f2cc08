"""R1: the grant matrix through the transports. Every combination of rule (none, all, prefix
hit / miss / boundary) x reciprocity x consumer role x target role is set up for real, and
get / set / update (and subscribe, websocket only) are sent over REST and over the bridge
websocket; each outcome is compared with the independent oracle table of
tests/kanban/access/test_decision.py. Refusals must not tell "no such project" from "no grant"."""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from rest_framework.test import APIClient

from kanban.access.grant_rules import Grant
from kanban.access.memberships import membership_set
from kanban.asgi import application
from kanban.projects.lifecycle import project_create
from storage.kv import Dataset, kv_set
from tests.factories import a_reciprocity_case, a_user
from tests.kanban.access.test_decision import RECIPROCITY, ROLES, RULE_CASES, expected
from tests.kanban.bridge.helpers import (
    CONNECT_TIMEOUT,
    HOST,
    ORIGIN,
    session_cookie,
)

# A long scenario: CI's PostgreSQL + Redis pass runs it, the README's command leaves it out.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
KV_OPS = ["get", "set", "update"]


def build(rule_case: str, reciprocity: str, consumer_role: Any, target_role: Any, user: Any) -> Any:
    case = RULE_CASES[rule_case]
    consumer, target, elsewhere = (project_create(name=n) for n in ("A", "B", "C"))
    grant = Grant(case.rule, case.rule, case.rule, case.rule, case.rule)
    a_reciprocity_case(consumer, target, elsewhere, reciprocity=reciprocity, grant=grant)
    for project, role in ((consumer, consumer_role), (target, target_role)):
        membership_set(user=user, project=project, role=None)
        if role:
            membership_set(user=user, project=project, role=role)
    kv_set(dataset=Dataset(target.id), key=case.key, value=1, source={"via": "test"})
    return consumer, case.key


def rest_outcomes(client: APIClient, consumer: Any, key: str) -> tuple[dict[str, str], list[str]]:
    url = f"/api/v1/projects/{consumer.id}/related/inventory/kv/{key}"
    messages = []

    def code(response: Any) -> str:
        if response.status_code == 200:
            return "ok"
        body = response.json()
        messages.append(f"{body['code']}:{body['message']}")
        return str(body["code"])

    got = code(client.get(url))
    put = code(client.put(url, {"value": 2}, format="json"))
    update = got
    if got == "ok":
        revision = client.get(url).json()["revision"]
        update = code(client.put(url, {"value": 3, "expectedRevision": revision}, format="json"))
    return {"get": got, "set": put, "update": update}, messages


async def ws_outcomes(consumer: Any, key: str, cookie: bytes) -> dict[str, str]:
    communicator = WebsocketCommunicator(
        application, f"/ws/boards/{consumer.id}/", [ORIGIN, HOST, (b"cookie", cookie)]
    )
    connected, _ = await communicator.connect(timeout=CONNECT_TIMEOUT)
    assert connected
    first = await communicator.receive_output(timeout=CONNECT_TIMEOUT)
    if first["type"] == "websocket.close":
        # Refused before any frame, with 4403 whether the board is missing or closed to
        # this user: the same verdict as "no such project".
        assert first["code"] == 4403, first
        return dict.fromkeys([*KV_OPS, "subscribe"], "not_found")
    assert json.loads(first["text"])["event"] == "context", first
    next_id = 0

    async def call(op: str, **fields: Any) -> dict[str, Any]:
        nonlocal next_id
        next_id += 1
        frame = {"v": 1, "id": next_id, "op": op, "alias": "inventory", **fields}
        await communicator.send_to(text_data=json.dumps(frame))
        return json.loads(await communicator.receive_from(timeout=5))

    def code(reply: dict[str, Any]) -> str:
        return "ok" if reply["ok"] else str(reply["error"]["code"])

    try:
        got = await call("get", key=key)
        outcomes = {"get": code(got), "set": code(await call("set", key=key, value=2))}
        outcomes["update"] = outcomes["get"]
        if got["ok"]:
            fresh = await call("get", key=key)
            revision = fresh["result"]["revision"]
            outcomes["update"] = code(
                await call("set", key=key, value=3, expectedRevision=revision)
            )
        outcomes["subscribe"] = code(await call("subscribe"))
    finally:
        await communicator.disconnect()
    return outcomes


@pytest.mark.long
async def test_the_grant_matrix_holds_on_rest_and_websocket() -> None:
    user = await database_sync_to_async(a_user)("alice")
    client = APIClient()
    await database_sync_to_async(client.force_login)(user)
    cookie = await database_sync_to_async(session_cookie)(user)
    cases = mismatches = 0
    failures = []
    forbidden_messages: dict[str, set[str]] = defaultdict(set)
    tally: Counter[str] = Counter()
    combos = itertools.product(RULE_CASES, RECIPROCITY, ROLES, ROLES)
    for rule_case, reciprocity, consumer_role, target_role in combos:
        consumer, key = await database_sync_to_async(build)(
            rule_case, reciprocity, consumer_role, target_role, user
        )
        rest, messages = await database_sync_to_async(rest_outcomes)(client, consumer, key)
        ws = await ws_outcomes(consumer, key, cookie)
        for transport, outcomes in (("rest", rest), ("ws", ws)):
            for op, got in outcomes.items():
                want = expected(rule_case, reciprocity, consumer_role, target_role, op)
                cases += 1
                tally[got] += 1
                if got != want:
                    mismatches += 1
                    failures.append(
                        (
                            transport,
                            rule_case,
                            reciprocity,
                            consumer_role,
                            target_role,
                            op,
                            got,
                            want,
                        )
                    )
        for message in messages:
            if message.startswith("forbidden:"):
                forbidden_messages[message.split("through")[0]].add(message)
    print(f"\nR1: {cases} cases over REST and websocket, {mismatches} mismatches; {dict(tally)}")
    assert failures == []
    for variants in forbidden_messages.values():
        assert len(variants) == 1, f"refusals differ, leaking why: {variants}"
