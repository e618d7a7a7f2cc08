"""The tools as listed: the sizes their descriptions name are the deployment's settings."""

from __future__ import annotations

import asyncio
from typing import Any

from kanban.mcp.server import _list_tools
from kanban.mcp.tools import TOOL_NAMES, tool_schemas


def test_the_sizes_in_the_descriptions_follow_the_settings(settings: Any) -> None:
    settings.KANBAN_MAX_VALUE_BYTES = 4321
    settings.KANBAN_MAX_DOCUMENT_BYTES = 98765

    described = {tool["name"]: tool["description"] for tool in tool_schemas()}

    assert "at most 4321 bytes" in described["kv_store"]
    assert "at most 98765 bytes" in described["knowledge_documents"]
    assert set(described) == TOOL_NAMES and "$" not in "".join(described.values())


def test_tools_list_tells_an_agent_the_deployments_limits(settings: Any) -> None:
    settings.KANBAN_MAX_VALUE_BYTES = 2048

    listed = asyncio.run(_list_tools(None, None))

    (kv,) = [tool for tool in listed.tools if tool.name == "kv_store"]
    assert kv.description is not None and "at most 2048 bytes" in kv.description
