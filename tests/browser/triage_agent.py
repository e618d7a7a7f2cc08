"""The triage agent of ``test_agent_scenario`` on the official Python MCP client: the same
steps and the same line protocol as ``tools/mcp-conformance/triage_agent.mjs`` (read there),
so the test drives either the same way:

    python tests/browser/triage_agent.py MCP_URL TOKEN BOARD_ID
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

QUIET = 0.5
NOTIFIED_WITHIN = 3.0
MISTAKE = "Login fails on Safari (duplicate?)"


def say(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


class Heard:
    """notifications/resources/updated, each with the time it came (epoch seconds)."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, float]] = []

    async def __call__(self, message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            self.updates.append((str(root.params.uri), time.time()))


class Agent:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.conflicts = 0

    async def cards(self, **arguments: Any) -> dict[str, Any]:
        """One board_cards call: its typed answer, or {error} with the tool's error body."""
        result = await self.client.call_tool("board_cards", arguments)
        body = result.structured_content
        if body is None:
            body = json.loads(result.content[0].text)  # type: ignore[union-attr]
        return {"error": body} if result.is_error else dict(body)

    async def must(self, **arguments: Any) -> dict[str, Any]:
        answer = await self.cards(**arguments)
        if "error" in answer:
            raise RuntimeError(f"{arguments['action']}: {answer['error']}")
        return answer

    async def over_latest(self, card_id: str, **arguments: Any) -> dict[str, Any]:
        """A compare-and-set write over the card as read now; a conflict reads again and
        retries, as an agent that lost a race does."""
        for _ in range(5):
            card = await self.must(action="get", id=card_id)
            answer = await self.cards(**arguments, id=card_id, revision=card["revision"])
            if "error" not in answer:
                return answer
            if answer["error"].get("code") != "conflict":
                raise RuntimeError(str(answer["error"]))
            self.conflicts += 1
        raise RuntimeError(f"{arguments['action']}: still a conflict after 5 reads")


async def run(url: str, token: str, board: str) -> None:
    heard = Heard()
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    # The initialize handshake (mode="legacy"), as the TypeScript client makes it: resource
    # subscriptions live in the session it opens. The default "auto" mode speaks the
    # server/discover protocol, in which this server offers no resources/subscribe.
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, mode="legacy", message_handler=heard) as client:
        agent = Agent(client)
        columns = (await agent.must(action="list"))["columns"]
        say("columns", columns=[c["id"] for c in columns])
        todo, doing = columns[0], columns[1]

        subscribed: bool | str = True
        try:
            await client.subscribe_resource(f"kanban://boards/{board}")
        except Exception as error:  # what the server said: reported, the rest still runs
            subscribed = str(error)

        card = await agent.must(
            action="add",
            title="Login fails on Safari",
            column=todo["id"],
            checklist=["Reproduce", "Find the commit", "Write a test", "Fix", "Release"],
            labels=["bug", "safari"],
            assignees=["alice", "bob"],
            due="2027-03-01",
            text="Seen by three customers this morning.",
        )
        say("card", id=card["id"])
        await agent.must(action="comment", id=card["id"], text="Reproduced on Safari 17.4.")
        for item in card["checklist"][:3]:
            await agent.must(action="checklist_tick", id=card["id"], item=item["id"], done=True)
        await agent.must(action="move", id=card["id"], column=doing["id"])

        # Quiet: every notification of its own writes has come, so the next is someone else's.
        seen = len(heard.updates)
        while True:
            await asyncio.sleep(QUIET)
            if len(heard.updates) == seen:
                break
            seen = len(heard.updates)
        ready_at = time.time()
        say("ready", heard=len(heard.updates), subscribed=subscribed)
        line = await asyncio.to_thread(sys.stdin.readline)
        if line.strip() != "saved":
            raise RuntimeError(f"expected 'saved' on stdin, not {line!r}")
        deadline = time.monotonic() + NOTIFIED_WITHIN
        notified = None
        while notified is None and time.monotonic() < deadline:
            notified = next((h for h in heard.updates if h[1] > ready_at), None)
            if notified is None:
                await asyncio.sleep(0.01)
        say(
            "notified",
            at=None if notified is None else notified[1],
            uri=None if notified is None else notified[0],
        )

        for item in card["checklist"][3:]:
            await agent.must(action="checklist_tick", id=card["id"], item=item["id"], done=True)
        # A mistake, undone from the card's history over the revision read (compare-and-set).
        await agent.over_latest(card["id"], action="update", title=MISTAKE)
        versions = (await agent.must(action="history", id=card["id"]))["versions"]
        before = next(v for v in versions if v.get("card") and v["card"]["title"] != MISTAKE)
        restored = await agent.over_latest(
            card["id"], action="restore_version", version=before["revision"]
        )
        say(
            "done",
            card=restored,
            versions=len(versions),
            conflicts=agent.conflicts,
            restored=before["revision"],
        )


def main() -> None:
    url, token, board = sys.argv[1:4]
    try:
        asyncio.run(run(url, token, board))
    except Exception as error:
        say("error", message=repr(error))
        sys.exit(1)


if __name__ == "__main__":
    main()
