"""What each tool answers, as the ``outputSchema`` it publishes: one object at the root
(MCP up to 2025-11-25 wants one), ``anyOf`` the shapes its actions answer, each written out
in full (no ``$ref``, which not every client's validator resolves). The same value goes out
as ``structuredContent`` and as JSON text beside it, for clients older than typed results.

The schemas are open (a field added later does not break an older client's validation);
``tests/kanban/mcp/test_typed_results.py`` checks every action's answer against them closed,
so each field answered is declared here. A refusal is a tool error whose text is
``{code, message, ...}``, the codes REST and the bridge use; it carries no structured
content, which clients then do not check against these schemas.
"""

from __future__ import annotations

from typing import Any, Final

_STRING: Final = {"type": "string"}
_STRINGS: Final = {"type": "array", "items": _STRING}
_OR_NULL: Final = {"type": ["string", "null"]}
_INTEGER: Final = {"type": "integer"}
_BOOLEAN: Final = {"type": "boolean"}
_OBJECT: Final = {"type": "object"}


def _shape(*required: str, **properties: Any) -> dict[str, Any]:
    return {"type": "object", "required": list(required), "properties": properties}


KV_RESULT: Final = {
    "type": "object",
    "anyOf": [
        # get; `source`: who made the last write and through what, when an agent did
        _shape("found", found=_BOOLEAN, value={}, revision=_STRING, source=_OBJECT),
        _shape("revision", revision=_STRING),  # set
    ],
}

_ABSTRACT: Final = {
    "id": _STRING,
    "title": _STRING,
    "markdownPreview": _STRING,
    "size": _INTEGER,
    "updatedAt": _STRING,
}
KNOWLEDGE_RESULT: Final = {
    "type": "object",
    "anyOf": [
        _shape(  # list
            "documents",
            documents={"type": "array", "items": _shape(*_ABSTRACT, **_ABSTRACT)},
            total=_INTEGER,
            nextCursor=_OR_NULL,
        ),
        _shape(  # get, and create and edit: the summary, or id and revision alone
            "id",
            "revision",
            **_ABSTRACT,
            markdown=_STRING,
            createdAt=_STRING,
            revision=_STRING,
        ),
        _shape(  # search
            "results",
            results={
                "type": "array",
                "items": _shape(
                    documentId=_STRING,
                    title=_STRING,
                    lineNumber=_INTEGER,
                    line=_STRING,
                    before=_STRINGS,
                    after=_STRINGS,
                ),
            },
            truncated=_BOOLEAN,
        ),
        _shape(  # read_lines
            "lines",
            documentId=_STRING,
            startLine=_INTEGER,
            endLine=_INTEGER,
            totalLines=_INTEGER,
            lines=_STRINGS,
        ),
        _shape("deleted", deleted=_BOOLEAN),  # delete
    ],
}

_LABEL: Final = _shape("name", "color", name=_STRING, color=_STRING)
_COLUMN: Final = _shape("id", "title", "wip", id=_STRING, title=_STRING, wip=_INTEGER)
_FIELDS: Final = dict(
    id=_STRING,
    title=_STRING,
    description=_STRING,
    assignees=_STRINGS,
    labels=_STRINGS,
    start=_OR_NULL,
    due=_OR_NULL,
    column=_STRING,
    rank=_STRING,
    item=_OR_NULL,
    archived=_BOOLEAN,
    checklist={
        "type": "array",
        "items": _shape("id", "text", "done", id=_STRING, text=_STRING, done=_BOOLEAN),
    },
    commentCount=_INTEGER,
)
#: A card as a kept version held it (history).
_CARD_FIELDS: Final = _shape("id", "title", "column", **_FIELDS)
_CARD: Final = _shape(
    "id",
    "title",
    "column",
    "revision",
    **_FIELDS,
    revision=_STRING,
    # add and update: the assignees told of it, or why telling them failed
    notified=_STRINGS,
    notifyError={"type": "object"},
)
_COMMENT: Final = _shape(
    "id",
    "author",
    "text",
    id=_STRING,
    author=_STRING,
    text=_STRING,
    at=_STRING,
    edited=_OR_NULL,
)
BOARD_RESULT: Final = {
    "type": "object",
    "anyOf": [
        _CARD,  # get, add, update, move, archive, restore, restore_version, checklist_*
        _shape(  # list
            "cards",
            columns={"type": "array", "items": _COLUMN},
            cards={"type": "array", "items": _CARD},
            cursor=_OR_NULL,
        ),
        _shape(  # comment, comment_edit, comment_delete
            "commentCount",
            comment=_COMMENT,
            deleted=_STRING,
            commentCount=_INTEGER,
        ),
        _shape(  # labels, label_add, label_update, label_remove
            "labels",
            label=_LABEL,
            labels={"type": "array", "items": _LABEL},
        ),
        _shape(  # copy_to_board, move_to_board
            "projectId",
            "card",
            projectId=_STRING,
            card=_STRING,
            column=_STRING,
            moved=_BOOLEAN,
            comments=_INTEGER,
            attachments=_INTEGER,
            assignees=_STRINGS,
        ),
        _shape(  # search
            "results",
            results={
                "type": "array",
                "items": _shape(
                    board=_shape("id", "name", id=_STRING, name=_STRING),
                    card=_shape("id", id=_STRING, title=_STRING, column=_STRING, archived=_BOOLEAN),
                    matched=_STRING,
                    excerpt=_STRING,
                    url=_STRING,
                ),
            },
            cursor=_OR_NULL,
        ),
        _shape(  # history
            "versions",
            versions={
                "type": "array",
                "items": _shape(
                    "revision",
                    "card",
                    revision=_STRING,
                    at=_STRING,
                    who=_STRING,
                    via=_STRING,
                    agent=_OR_NULL,
                    restoredFrom=_OR_NULL,
                    card={"anyOf": [_CARD_FIELDS, {"type": "null"}]},
                ),
            },
            cursor=_OR_NULL,
        ),
        _shape(  # column_add, column_update, column_reorder
            "column",
            "columns",
            column=_COLUMN,
            columns={"type": "array", "items": _COLUMN},
        ),
    ],
}
