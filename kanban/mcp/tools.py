"""The two MCP tools, as seed 000 names them: ``knowledge_documents`` and ``kv_store``.

Each call is one ``kanban.data`` action for the token's project or, with ``alias``, for the
project it reaches under that alias: the same access decision, helpers and v2 document
format as REST and the bridge. The token's scope is checked first (``access_token_scope``),
the user's own role after it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from kanban.accounts.tokens import access_token_scope
from kanban.data import knowledge
from kanban.data.kv import Origin, check_run_id, project_kv_get, project_kv_set, read_result
from kanban.models import ApiToken
from storage.errors import invalid_argument

_ALIAS = {"type": "string", "description": "a related project's alias (default: this project)"}
_RUN = {
    "runId": {"type": "string", "description": "the agent run this write belongs to"},
    "conversationId": {"type": "string", "description": "the conversation it belongs to"},
}

KV_STORE: Final[dict[str, Any]] = {
    "name": "kv_store",
    "title": "Project KV",
    "description": (
        "Read (get) or write (set) one JSON value of the project's shared KV, or of a related "
        "project's through its alias. get answers {found, value, revision}; set answers "
        "{revision}. Values are JSON of at most 1 MiB."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["get", "set"]},
            "key": {"type": "string", "minLength": 1, "maxLength": 1024},
            "value": {"description": "any JSON value (set)"},
            "alias": _ALIAS,
            **_RUN,
        },
        "required": ["action", "key"],
        "additionalProperties": False,
    },
}

KNOWLEDGE_DOCUMENTS: Final[dict[str, Any]] = {
    "name": "knowledge_documents",
    "title": "Project Knowledge",
    "description": (
        "The project's Knowledge documents (markdown, v2 format), or a related project's "
        "through its alias: list (paged by cursor), get, create (id optional), edit (title "
        "and/or markdown), delete, search (query, optionally in one document with context "
        "lines) and read_lines (1-based, start to end inclusive)."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["list", "get", "create", "edit", "delete", "search", "read_lines"],
            },
            "id": {"type": "string", "description": "the document id"},
            "title": {"type": "string"},
            "markdown": {"type": "string"},
            "query": {"type": "string"},
            "cursor": {"type": "string", "description": "list: the page after this cursor"},
            "beforeLines": {"type": "integer", "minimum": 0},
            "afterLines": {"type": "integer", "minimum": 0},
            "start": {"type": "integer", "minimum": 1},
            "end": {"type": "integer", "minimum": 1},
            "alias": _ALIAS,
            **_RUN,
        },
        "required": ["action"],
        "additionalProperties": False,
    },
}

TOOLS: Final = (KNOWLEDGE_DOCUMENTS, KV_STORE)


@dataclass(frozen=True, slots=True)
class Call:
    token: ApiToken
    arguments: Mapping[str, Any]

    @property
    def common(self) -> dict[str, Any]:
        assert self.token.project_id is not None  # the endpoint takes scoped tokens only
        return {
            "user": self.token.user,
            "project_id": self.token.project_id,
            "alias": self.arguments.get("alias"),
        }

    def origin(self) -> Origin:
        return Origin(
            via="mcp",
            token=self.token.prefix,
            run_id=check_run_id(self.arguments.get("runId"), field="runId"),
            conversation_id=check_run_id(
                self.arguments.get("conversationId"), field="conversationId"
            ),
        )

    def required(self, name: str) -> Any:
        if self.arguments.get(name) is None:
            raise invalid_argument(f"this action needs {name!r}", field=name)
        return self.arguments[name]


def tool_call(*, token: ApiToken, name: str, arguments: Mapping[str, Any]) -> Any:
    """Run one tool call; its JSON result. Raises ``KanbanError`` for a refused one."""
    tool = next((tool for tool in TOOLS if tool["name"] == name), None)
    if tool is None:
        raise invalid_argument(f"no tool {name!r}", field="name")
    allowed = tool["inputSchema"]["properties"]
    extra = sorted(set(arguments) - set(allowed))
    if extra:
        raise invalid_argument(f"{name} takes no {extra[0]!r}", field=extra[0])
    actions = _KV if name == "kv_store" else _KNOWLEDGE
    action = arguments.get("action")
    if not isinstance(action, str) or action not in actions:
        raise invalid_argument(f"action must be one of {', '.join(actions)}", field="action")
    writes, run = actions[action]
    alias = arguments.get("alias")
    if alias is not None and not isinstance(alias, str):
        raise invalid_argument("alias must be a string", field="alias")
    access_token_scope(token=token, project_id=token.project_id, write=writes)
    return run(Call(token=token, arguments=arguments))


def _kv_get(call: Call) -> Any:
    return read_result(project_kv_get(key=call.required("key"), **call.common))


def _kv_set(call: Call) -> Any:
    if "value" not in call.arguments:
        raise invalid_argument("set needs 'value'", field="value")
    revision = project_kv_set(
        key=call.required("key"), value=call.arguments["value"], origin=call.origin(), **call.common
    )
    return {"revision": revision}


def _knowledge(action: str) -> Callable[[Call], Any]:
    def run(call: Call) -> Any:
        return knowledge.knowledge_action(
            action=action,
            document_id=call.arguments.get("id"),
            arguments=call.arguments,
            origin=call.origin(),
            **call.common,
        )

    return run


#: action -> (whether it writes, what runs it)
_Action = tuple[bool, Callable[[Call], Any]]
_KV: Final[dict[str, _Action]] = {"get": (False, _kv_get), "set": (True, _kv_set)}
_KNOWLEDGE: Final[dict[str, _Action]] = {
    action: (action in ("create", "edit", "delete"), _knowledge(action))
    for action in ("list", "get", "create", "edit", "delete", "search", "read_lines")
}
