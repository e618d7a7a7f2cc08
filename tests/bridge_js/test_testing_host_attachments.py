"""The plugin test host refuses an attachment's upload as a board does, word for word: the
same bad uploads go to the attachments service (what the board host's REST upload calls,
on a real database) and to the test host's world set up alike, and a file past the byte
limit is refused with the server's message (the board's host says it before sending)."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from kanban.access.grant_rules import NONE, Grant, Rule
from kanban.data.attachments import attachment_upload
from storage.errors import KanbanError
from tests.bridge_js.test_node_suite import BRIDGE, node_or_skip
from tests.factories import a_declaration, a_project, a_user

pytestmark = pytest.mark.django_db

BOARD = UUID("0d12eb9f-94e4-4505-a83d-59c5e3543078")
INVENTORY = UUID("636f4ff5-3b20-4b86-bb78-72b7e3159ea0")
LIMIT = 64

#: (who, alias, card, name, bytes): uploads the server refuses. alice develops on the board,
#: bob is its guest; the board reads the inventory's attachments and writes none.
UPLOADS: list[tuple[str, str | None, str, str, int]] = [
    ("bob", None, "c1", "a.png", 10),
    ("alice", "inventory", "c1", "a.png", 10),
    ("alice", "nope", "c1", "a.png", 10),
    ("alice", None, "c1", "a.png", LIMIT + 1),
    ("alice", None, "c1", "dir/", 10),
]

WORLD = f"""
import {{ createTestWorld }} from "./testing/world.mjs";
const uploads = JSON.parse(process.argv[1]);
const world = createTestWorld({{
  projects: {{ "{BOARD}": {{}}, "{INVENTORY}": {{}} }},
  relationships: [
    {{ from: "{BOARD}", alias: "inventory", to: "{INVENTORY}",
       read: ["attachments:"], write: "none" }},
  ],
  attachmentBytes: {LIMIT},
}});
const people = {{
  alice: {{ user: {{ id: 1, username: "alice", displayName: "alice" }}, role: "developer" }},
  bob: {{ user: {{ id: 2, username: "bob", displayName: "bob" }}, role: "guest" }},
}};
const answers = [];
for (const [who, alias, card, name, size] of uploads) {{
  const page = world.connect({{ project: "{BOARD}", ...people[who] }});
  const answer = new Promise((resolve) => {{
    const receive = page.attach((f) => f.id === 1 && resolve(f));
    const file = new Blob([new Uint8Array(size)]);
    const frame = {{ v: 1, id: 1, op: "attachments.upload", key: card, value: {{ name, file }} }};
    receive(alias ? {{ ...frame, alias }} : frame);
  }});
  const f = await answer;
  page.close();
  answers.push(f.ok ? null : {{ code: f.error.code, message: f.error.message }});
}}
world.close();
console.log(JSON.stringify(answers));
"""


def test_uploads_are_refused_in_the_servers_words(settings: Any, tmp_path: Path) -> None:
    node = node_or_skip()
    settings.KANBAN_ATTACHMENT_BYTES = LIMIT
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    alice, bob = a_user("alice"), a_user("bob")
    board = a_project(project_id=BOARD, members={alice: "developer", bob: "guest"})
    inventory = a_project(name="Inventory", project_id=INVENTORY, members={alice: "developer"})
    a_declaration(board, "inventory", inventory)
    a_declaration(
        inventory, "board", board, Grant(read=Rule("prefixes", ("attachments:",)), write=NONE)
    )
    people = {"alice": alice, "bob": bob}

    servers = [
        server_refusal(people[who], alias, card, name, size)
        for who, alias, card, name, size in UPLOADS
    ]
    ran = subprocess.run(
        [node, "--input-type=module", "-e", WORLD, json.dumps(UPLOADS)],
        cwd=BRIDGE,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    hosts = json.loads(ran.stdout)

    assert None not in servers, "every upload is one the server refuses"
    assert hosts == servers


def server_refusal(
    user: Any, alias: str | None, card: str, name: str, size: int
) -> dict[str, str] | None:
    try:
        attachment_upload(
            user=user,
            project_id=BOARD,
            alias=alias,
            card=card,
            name=name,
            content_type="",
            stream=io.BytesIO(bytes(size)),
        )
    except KanbanError as refused:
        return {"code": str(refused.code), "message": refused.message}
    return None
