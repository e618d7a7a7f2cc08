"""The plugin test host (bridge_js/testing) refuses as the server does, word for word: a
plugin's own test that checks a refusal's message passes on the test host and on a board.

The same bad calls go to the server (the bridge's one frame check, then its service, on a
real database) and to the test host's world set up alike (the same projects, people,
roles and grants); each refusal's code and message must be the same."""

from __future__ import annotations

import json
import subprocess
from typing import Any
from uuid import UUID

import pytest

from kanban.access.grant_rules import NONE, Grant, Rule
from kanban.bridge.frames import check_frame
from kanban.bridge.ops import bridge_call
from kanban.bridge.service import access_subscription
from storage.errors import KanbanError
from tests.bridge_js.test_node_suite import BRIDGE, node_or_skip
from tests.factories import a_declaration, a_project, a_user

pytestmark = pytest.mark.django_db

BOARD = UUID("0d12eb9f-94e4-4505-a83d-59c5e3543078")
INVENTORY = UUID("636f4ff5-3b20-4b86-bb78-72b7e3159ea0")
BILLING = UUID("5b0e2f4c-6a53-4f7e-9d0b-1c2d3e4f5a6b")

#: (who, frame): every call the server refuses. alice is a developer of the board, bob a
#: guest; the board reads the inventory's "stock:" keys and writes none of them; billing
#: has not declared the board back.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("bob", {"op": "set", "key": "counter", "value": 1}),
    ("bob", {"op": "set", "key": "counter", "value": 1, "expectedRevision": None}),
    ("alice", {"op": "set", "key": "counter", "value": 1, "expectedRevision": None}),
    ("alice", {"op": "set", "key": "counter", "value": 1, "expectedRevision": "999999"}),
    ("alice", {"op": "get", "alias": "nope", "key": "counter"}),
    ("alice", {"op": "get", "alias": "billing", "key": "counter"}),
    ("alice", {"op": "get", "alias": "inventory", "key": "secret"}),
    ("alice", {"op": "get", "alias": "inventory", "key": 'it\'s "quoted"\n'}),
    ("alice", {"op": "get", "alias": "inventory", "key": "it's"}),
    ("alice", {"op": "history", "alias": "inventory", "key": "secret"}),
    ("alice", {"op": "set", "alias": "inventory", "key": "stock:1", "value": 2}),
    ("bob", {"op": "set", "alias": "inventory", "key": "stock:1", "value": 2}),
    ("alice", {"op": "subscribe", "alias": "nope"}),
    ("alice", {"op": "watch", "alias": "billing", "value": {"prefix": "stock:"}}),
    ("alice", {"op": "configuration.set", "alias": "inventory", "key": "default", "value": {}}),
    ("alice", {"op": "notify", "alias": "inventory", "value": {"users": ["bob"], "text": "hi"}}),
    ("bob", {"op": "notify", "value": {"users": ["alice"], "text": "hi"}}),
    ("alice", {"op": "notify", "value": {"users": "bob", "text": "hi"}}),
    ("alice", {"op": "notify", "value": {"users": [], "text": "hi"}}),
    ("alice", {"op": "notify", "value": {"users": ["bob"] * 21, "text": "hi"}}),
    ("alice", {"op": "notify", "value": {"users": ["bob"], "text": "  "}}),
    ("alice", {"op": "notify", "value": {"users": ["bob"], "text": "x" * 501}}),
    ("alice", {"op": "notify", "value": {"users": ["bob"], "text": "a\u0007b"}}),
    ("alice", {"op": "notify", "value": {"users": ["bob"], "text": "hi", "card": "no card!"}}),
    ("alice", {"op": "notify", "value": {"users": ["mallory"], "text": "hi"}}),
    ("bob", {"op": "attachments.delete", "key": "c1", "value": {"id": "0" * 32}}),
    ("alice", {"op": "attachments.delete", "key": "c1", "value": {"id": "0" * 32}}),
    ("alice", {"op": "attachments.delete", "key": "c1", "value": {}}),
    ("alice", {"op": "attachments.list", "alias": "inventory", "key": "c1"}),
    ("alice", {"op": "attachments.list", "alias": "billing", "key": "c1"}),
    (
        "alice",
        {"op": "attachments.delete", "alias": "inventory", "key": "c1", "value": {"id": "x"}},
    ),
    ("alice", {"op": "set", "key": "attachments:c1", "value": {"attachments": []}}),
]

#: The test host's world, set up as the database below is.
WORLD = f"""
import {{ createTestWorld }} from "./testing/world.mjs";
const calls = JSON.parse(process.argv[1]);
const world = createTestWorld({{
  projects: {{ "{BOARD}": {{ kv: {{ counter: 0 }} }}, "{INVENTORY}": {{}}, "{BILLING}": {{}} }},
  relationships: [
    {{ from: "{BOARD}", alias: "inventory", to: "{INVENTORY}", read: ["stock:"], write: "none" }},
    {{ from: "{BOARD}", alias: "billing", to: "{BILLING}", pending: true }},
  ],
  members: [{{ id: 2, username: "bob", displayName: "bob", role: "guest" }}],
}});
const people = {{
  alice: {{ user: {{ id: 1, username: "alice", displayName: "alice" }}, role: "developer" }},
  bob: {{ user: {{ id: 2, username: "bob", displayName: "bob" }}, role: "guest" }},
}};
const answers = calls.map(([who, frame], index) => {{
  const page = world.connect({{ project: "{BOARD}", ...people[who] }});
  let answer;
  const receive = page.attach((f) => {{ if (f.id === index + 1) answer = f; }});
  receive({{ v: 1, id: index + 1, ...frame }});
  page.close();
  return answer.ok ? null : {{ code: answer.error.code, message: answer.error.message }};
}});
world.close();
console.log(JSON.stringify(answers));
"""


def test_hosts_refusals_are_the_servers_word_for_word() -> None:
    node = node_or_skip()
    alice, bob = a_user("alice"), a_user("bob")
    board = a_project(project_id=BOARD, members={alice: "developer", bob: "guest"})
    inventory = a_project(name="Inventory", project_id=INVENTORY, members={alice: "developer"})
    a_project(name="Billing", project_id=BILLING, members={alice: "developer"})
    a_declaration(board, "inventory", inventory)
    a_declaration(inventory, "board", board, Grant(read=Rule("prefixes", ("stock:",)), write=NONE))
    a_declaration(board, "billing", BILLING)
    people = {"alice": alice, "bob": bob}
    seed = {"v": 1, "id": 1, "op": "set", "key": "counter", "value": 0}
    bridge_call(user=alice, consumer_id=BOARD, page="", request=check_frame(seed))

    servers = [server_refusal(people[who], index, call) for index, (who, call) in enumerate(CALLS)]
    hosts = host_refusals(node)

    assert None not in servers, "every call is one the server refuses"
    differ = [
        {"call": f"{who} {call}", "server": server, "host": host}
        for (who, call), server, host in zip(CALLS, servers, hosts, strict=True)
        if host != server
    ]
    assert differ == []


def server_refusal(user: Any, index: int, call: dict[str, Any]) -> dict[str, str] | None:
    try:
        request = check_frame({"v": 1, "id": index + 1, **call})
        if request.op in ("subscribe", "watch"):
            # What the consumer asks before it follows anything.
            access_subscription(user=user, consumer_id=BOARD, alias=request.alias)
        else:
            bridge_call(user=user, consumer_id=BOARD, page="", request=request)
    except KanbanError as refused:
        return {"code": str(refused.code), "message": refused.message}
    return None


def host_refusals(node: str) -> list[dict[str, str] | None]:
    ran = subprocess.run(
        [node, "--input-type=module", "-e", WORLD, json.dumps(CALLS)],
        cwd=BRIDGE,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    answers: list[dict[str, str] | None] = json.loads(ran.stdout)
    return answers
