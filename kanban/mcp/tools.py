"""The MCP tools: ``knowledge_documents`` and ``kv_store`` as seed 000 names them, and
``board_cards`` for the built-in Board's cards.

Each call is one ``kanban.data`` action (``knowledge_action``, ``kv_action``,
``board_action``) for the
token's project or, with ``alias``, for the project it reaches under that alias: the same
access decision, helpers and formats as REST and the bridge. This module only maps a tool's
arguments onto the action's and its refusals onto tool errors. The token's scope is checked
first (``access_token_scope``), the user's own role after it. The limits in the input
schemas come from the one protocol spec (``bridge_js/protocol.json``); the sizes in the
descriptions are the deployment's settings (``tool_schemas``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from string import Template
from typing import Any, Final

from django.conf import settings

from kanban.accounts.tokens import access_token_scope
from kanban.data import knowledge
from kanban.data.board import cards as board_cards
from kanban.data.board import columns as board_columns
from kanban.data.board import labels as board_labels
from kanban.data.board import layout as board_layout
from kanban.data.kv import Provenance, check_run_id, kv_action
from kanban.data.target import Target
from kanban.mcp.arguments import ArgumentRule
from kanban.mcp.results import BOARD_RESULT, KNOWLEDGE_RESULT, KV_RESULT
from kanban.models import ApiToken
from kanban.observability.metrics import MCP_CALLS
from storage import jsoncodec, limits
from storage.errors import KanbanError, invalid_argument

_ALIAS: Final = {
    "type": "string",
    "description": "a related project's alias (default: this project)",
    "pattern": limits.SPEC["alias"],
}
_RUN: Final = {
    "runId": {"type": "string", "description": "the agent run this write belongs to"},
}
_CONVERSATION: Final = {
    "type": "string",
    "description": "the conversation whose KV to read and write (default: the project's); "
    "also recorded in the write's source",
}
_KEY: Final = {"type": "string", "minLength": 1, "maxLength": limits.MAX_KEY_CHARS}
_REVISION: Final = {
    "type": ["string", "null"],
    "maxLength": limits.MAX_REVISION_CHARS,
    "description": "set only if the key holds this revision (null: only if it is absent); "
    "a mismatch is a conflict error carrying the current value and revision",
}

KV_STORE: Final[dict[str, Any]] = {
    "name": "kv_store",
    "title": "Project KV",
    "description": (
        "Read (get) or write (set) one JSON value of the project's shared KV (or, with "
        "conversationId, of that conversation's KV), or of a related project's through its "
        "alias. get answers {found, value, revision}, and source {user, via, agent?, runId?, "
        "conversationId?} when an agent made the last write; set answers {revision}. Pass "
        "expectedRevision to write only over the revision you read: without it a set "
        "replaces whatever is there. Values are JSON of at most $value_bytes bytes. To "
        "change a Board's cards use board_cards, never a set of board:cards."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["get", "set"]},
            "key": _KEY,
            "value": {"description": "any JSON value (set)"},
            "expectedRevision": _REVISION,
            "alias": _ALIAS,
            "conversationId": _CONVERSATION,
            **_RUN,
        },
        "required": ["action", "key"],
        "additionalProperties": False,
    },
    "outputSchema": KV_RESULT,
}

KNOWLEDGE_DOCUMENTS: Final[dict[str, Any]] = {
    "name": "knowledge_documents",
    "title": "Project Knowledge",
    "description": (
        "The project's Knowledge documents (markdown, v2 format), or a related project's "
        "through its alias: list (paged by cursor), get, create (id optional), edit (title "
        "and/or markdown), delete, search (query, optionally in one document with context "
        "lines) and read_lines (1-based, start to end inclusive). A document's markdown is "
        "at most $document_bytes bytes."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["list", "get", "create", "edit", "delete", "search", "read_lines"],
            },
            "id": {"type": "string", "description": "the document id"},
            "title": {"type": "string", "maxLength": limits.MAX_TITLE_CHARS},
            "markdown": {"type": "string"},
            "query": {"type": "string"},
            "cursor": {"type": "string", "description": "list: the page after this cursor"},
            "beforeLines": {"type": "integer", "minimum": 0},
            "afterLines": {"type": "integer", "minimum": 0},
            "start": {"type": "integer", "minimum": 1},
            "end": {"type": "integer", "minimum": 1},
            "alias": _ALIAS,
            **_RUN,
            "conversationId": {"type": "string", "description": "recorded in the write's source"},
        },
        "required": ["action"],
        "additionalProperties": False,
    },
    "outputSchema": KNOWLEDGE_RESULT,
}


_CARD_ID: Final = {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}
BOARD_CARDS: Final[dict[str, Any]] = {
    "name": "board_cards",
    "title": "Board cards",
    "description": (
        "The cards of this project's built-in Board, changed the way the Board changes them, "
        "so nothing a person or another agent wrote meanwhile is lost. list (filter by "
        "column, assignee, label, text; archived: true for the archive; paged by cursor) "
        "answers {columns, cards, cursor}; get, add, update, move, archive and restore "
        "answer the card with its revision. add takes in one call the card's checklist, "
        "labels, assignees, dates and a first comment (text); a bad part writes nothing. "
        "update changes only the fields given; pass the "
        "revision you read, and a field someone else changed since is a conflict error "
        "naming it (with the current card). move puts a card into a column, at the end or "
        "before/after another card. Assignees are members' usernames. comment adds a "
        "comment (text) as the token's person, comment_edit (comment, text) and "
        "comment_delete (comment) change their own (an owner's delete anyone's); each "
        "answers with the card's commentCount. checklist_add (text), checklist_tick (item, "
        "done), checklist_rename (item, text), checklist_reorder (item, position) and "
        "checklist_remove (item) answer the card. column_add (title, wip), column_update "
        "(column, title and/or wip) and column_reorder (column, position) answer "
        "{column, columns}; a WIP limit of 0 is none. history (id; limit, cursor) answers "
        "the card's kept versions, newest first; restore_version (id, version, revision) "
        "brings one back over the revision you read (stale: conflict) and answers the card. "
        "labels lists the board's label set; label_add (label, color), label_update (label; "
        "name and/or color: cards follow a rename) and label_remove (label: it comes off "
        "every card) answer {label?, labels}. copy_to_board and move_to_board (id, board, "
        "column?) take a card with its comments, checklist and files to another board your "
        "token reaches. search (text; limit, cursor) finds cards on every board your token "
        "reads. Nothing is deleted: archive keeps a card."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(board_cards.ACTIONS)},
            "id": {**_CARD_ID, "description": "the card (every action but list and add)"},
            "title": {
                "type": "string",
                "minLength": 1,
                "maxLength": board_layout.MAX_TEXT,
                "description": "the card's (add, update) or the column's (column_add, _update)",
            },
            "description": {"type": "string", "maxLength": board_layout.MAX_DESCRIPTION},
            "labels": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": board_layout.MAX_LABEL},
                "maxItems": board_layout.MAX_LABELS,
            },
            "assignees": {
                "type": "array",
                "items": {"type": "string"},
                "maxItems": board_layout.MAX_ASSIGNEES,
            },
            "checklist": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": board_layout.MAX_TEXT},
                "maxItems": board_layout.MAX_CHECKLIST,
                "description": "add: the new card's checklist, item texts in order",
            },
            "start": {"type": ["string", "null"], "description": "YYYY-MM-DD, or null for none"},
            "due": {"type": ["string", "null"], "description": "YYYY-MM-DD, or null for none"},
            "column": {
                "type": "string",
                "description": "a column id (add, move, column_*, *_to_board; list: filter)",
            },
            "wip": {
                "type": "integer",
                "minimum": 0,
                "maximum": board_columns.MAX_WIP,
                "description": "column_add, column_update: the WIP limit (0: none)",
            },
            "position": {
                "type": "integer",
                "minimum": 0,
                "description": "checklist_reorder, column_reorder: its new place (0 first)",
            },
            "board": {
                "type": "string",
                "format": "uuid",
                "description": "copy_to_board, move_to_board: the board's id",
            },
            "before": {**_CARD_ID, "description": "move: put it just before this card"},
            "after": {**_CARD_ID, "description": "move: put it just after this card"},
            "revision": {
                "type": "string",
                "maxLength": limits.MAX_REVISION_CHARS,
                "description": "update, restore_version: the card's revision you read",
            },
            "version": {
                "type": "string",
                "maxLength": limits.MAX_REVISION_CHARS,
                "description": "restore_version: the revision of the version to bring back",
            },
            "assignee": {"type": "string", "description": "list: cards assigned to them"},
            "label": {
                "type": "string",
                "description": "list: cards with this label; label_*: the label's name",
            },
            "name": {"type": "string", "description": "label_update: the label's new name"},
            "color": {"type": "string", "enum": list(board_labels.COLOURS)},
            "text": {
                "type": "string",
                "description": "list, search: cards whose text has every word; add (a first "
                "comment), comment, comment_edit: the comment (markdown); checklist_add, "
                "checklist_rename: the item",
            },
            "item": {**_CARD_ID, "description": "checklist_tick/rename/reorder/remove: the item"},
            "comment": {**_CARD_ID, "description": "comment_edit/delete: the comment's id"},
            "done": {"type": "boolean", "description": "checklist_tick: ticked or not"},
            "archived": {"type": "boolean", "description": "list: the archive instead"},
            "cursor": {"type": "string", "description": "list, history, search: the next page"},
            "limit": {"type": "integer", "minimum": 1, "maximum": board_cards.MAX_LIMIT},
            **_RUN,
            "conversationId": {"type": "string", "description": "recorded in the write's source"},
        },
        "required": ["action"],
        "additionalProperties": False,
    },
    "outputSchema": BOARD_RESULT,
}


@dataclass(frozen=True, slots=True)
class Call:
    token: ApiToken
    arguments: Mapping[str, Any]

    @property
    def target(self) -> Target:
        assert self.token.project_id is not None  # the endpoint takes scoped tokens only
        return Target(
            user=self.token.user,
            project_id=self.token.project_id,
            alias=self.arguments.get("alias"),
            conversation_id=self.conversation_id,
        )

    def provenance(self) -> Provenance:
        return Provenance(
            via="mcp",
            token=self.token.prefix,
            # The token's name is the agent's ("triage-bot"); a blank one names none.
            agent=self.token.name.strip() or None,
            run_id=check_run_id(self.arguments.get("runId"), field="runId"),
            conversation_id=self.conversation_id,
        )

    @property
    def conversation_id(self) -> str | None:
        return check_run_id(self.arguments.get("conversationId"), field="conversationId")


@dataclass(frozen=True, slots=True)
class Tool:
    schema: dict[str, Any]
    #: action -> whether it writes
    actions: Mapping[str, bool]
    run: Callable[[str, Call], Any]


def _kv(action: str, call: Call) -> Any:
    arguments = {
        name: call.arguments[name]
        for name in ("key", "value", "expectedRevision")
        if name in call.arguments
    }
    return kv_action(
        action=action,
        arguments=arguments,
        provenance=call.provenance(),
        target=call.target,
    )


def _knowledge(action: str, call: Call) -> Any:
    return knowledge.knowledge_action(
        action=action,
        document_id=call.arguments.get("id"),
        arguments=call.arguments,
        provenance=call.provenance(),
        target=call.target,
    )


def _board(action: str, call: Call) -> Any:
    return board_cards.board_action(
        action=action,
        user=call.token.user,
        project_id=call.target.project_id,
        arguments=call.arguments,
        provenance=call.provenance(),
        token=call.token,
    )


_KNOWLEDGE_WRITES: Final = frozenset({"create", "edit", "delete"})
_TOOLS: Final[dict[str, Tool]] = {
    "knowledge_documents": Tool(
        KNOWLEDGE_DOCUMENTS,
        {
            action: action in _KNOWLEDGE_WRITES
            for action in KNOWLEDGE_DOCUMENTS["inputSchema"]["properties"]["action"]["enum"]
        },
        _knowledge,
    ),
    "kv_store": Tool(KV_STORE, {"get": False, "set": True}, _kv),
    "board_cards": Tool(
        BOARD_CARDS,
        {action: action in board_cards.WRITES for action in board_cards.ACTIONS},
        _board,
    ),
}
assert all(
    tool.schema["inputSchema"]["properties"]["action"]["enum"] == list(tool.actions)
    for tool in _TOOLS.values()
)
_RULES: Final = {
    name: ArgumentRule(name, tool.schema["inputSchema"]) for name, tool in _TOOLS.items()
}
TOOLS: Final = tuple(tool.schema for tool in _TOOLS.values())
TOOL_NAMES: Final = frozenset(_TOOLS)


def tool_schemas() -> list[dict[str, Any]]:
    """The tools as ``tools/list`` gives them: each description names the deployment's own
    limits (``KANBAN_MAX_VALUE_BYTES``, ``KANBAN_MAX_DOCUMENT_BYTES``), read when listed, so
    an agent is told what the server will refuse rather than the spec's default."""
    sizes = {
        "value_bytes": int(settings.KANBAN_MAX_VALUE_BYTES),
        "document_bytes": int(settings.KANBAN_MAX_DOCUMENT_BYTES),
    }
    return [
        {**schema, "description": Template(schema["description"]).substitute(sizes)}
        for schema in TOOLS
    ]


def tool_call(*, token: ApiToken, name: str, arguments: Mapping[str, Any]) -> Any:
    """Run one tool call; its JSON result. Raises ``KanbanError`` for a refused one."""
    tool = _TOOLS.get(name)
    if tool is None:
        raise invalid_argument(f"no tool {name!r}", field="name")
    arguments = _RULES[name].checked(arguments)
    action = arguments["action"]
    access_token_scope(token=token, project_id=token.project_id, write=tool.actions[action])
    return tool.run(action, Call(token=token, arguments=arguments))


def tool_result(*, token: ApiToken, name: str, arguments: Mapping[str, Any]) -> tuple[bool, Any]:
    """A tool's answer: whether it failed, and its JSON result (what its ``outputSchema``
    declares), or the refusal (``{code, message}``, the codes REST and the bridge use) as a
    tool error the agent can read and act on."""
    try:
        value = tool_call(token=token, name=name, arguments=arguments)
        jsoncodec.check_json(value)
    except KanbanError as error:
        MCP_CALLS.labels(name, str(error.code)).inc()
        return True, error.as_dict()
    MCP_CALLS.labels(name, "ok").inc()
    return False, value
