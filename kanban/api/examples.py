"""Examples for every operation of the OpenAPI schema, in one table next to the shapes they
show: a request body's by operation, a success answer's by the component it renders (or by
operation for the few answers without one), a path parameter's by name.

Schemathesis sends the request examples as they are, so each is data the server accepts
for its schema; the ids in them name nothing on a fresh server (the project, offer and
invite ids), so an example request answers 404 there, a documented answer.
``tests/api/test_schema_examples.py`` checks that every operation has them and that each
is valid against its own schema."""

from __future__ import annotations

from typing import Any, Final

from kanban.imports.board_export import CSV_HEADER

PROJECT: Final = "6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"
OTHER_PROJECT: Final = "0b7e4c1a-9d2f-4a6b-8c3e-5f1a2b3c4d5e"
AT: Final = "2026-03-02T09:30:00+00:00"
LATER: Final = "2026-03-09T09:30:00+00:00"
ATTACHMENT: Final = "3f2b9c6d1e8a4f7b9c0d2e4f6a8b0c1d"
ALICE: Final = {"username": "alice", "displayName": "Alice Archer"}
SOURCE: Final = {"via": "api", "user": "alice", "consumerProject": PROJECT}

PATH_PARAMETERS: Final[dict[str, Any]] = {
    "project_id": PROJECT,
    "key": "settings/theme",
    "alias": "roadmap",
    "conversation_id": "conv-2026-03-02",
    "card": "c1",
    "attachment_id": ATTACHMENT,
    "configuration_id": "default",
    "document_id": "release-notes",
    "entrypoint_id": "summarise",
    "username": "bob",
    "invite_id": 7,
    "offer_id": 3,
    "token": "d3JpdGUtb25seQ",
}

_VALUE_PUT: Final = {"value": {"theme": "dark", "columns": 4}}
_BATCH: Final = {"keys": ["settings/theme", "settings/filters"]}
_DOCUMENT_NEW: Final = {
    "id": "release-notes",
    "title": "Release notes",
    "markdown": "# Release notes\n\n- Cards move between boards.\n",
}
_DOCUMENT_EDIT: Final = {
    "title": "Release notes",
    "markdown": "# Release notes\n\n- Cards move and copy between boards.\n",
    "expectedRevision": "12",
}
_RUN: Final = {"args": ["--since", "2026-03-01"]}

#: Request bodies by operationId (binary bodies, a board archive's bytes, have none).
REQUESTS: Final[dict[str, Any]] = {
    "notifications_read": {"ids": [41, 42]},
    "projects_create": {"name": "Roadmap", "template": "board"},
    "project_archive": {"archived": True},
    "attachments_upload": {"card": "c1", "file": "release plan, draft 2\n"},
    "cards_copy": {"targetProject": OTHER_PROJECT, "column": "todo"},
    "cards_move": {"targetProject": OTHER_PROJECT},
    "configurations_create": {"name": "Review week", "values": {"swimlanes": "assignee"}},
    "configuration_update": {"values": {"swimlanes": "none"}},
    "configuration_duplicate": {"name": "Review week (copy)"},
    "invite_create": {"role": "developer", "days": 7, "uses": 1, "email": "dana@example.com"},
    "member_set": {"role": "guest"},
    "api_v1_projects_conversations_kv_update": _VALUE_PUT,
    "api_v1_projects_conversations_persistent_values_update": _VALUE_PUT,
    "api_v1_projects_kv_update": _VALUE_PUT,
    "api_v1_projects_persistent_values_update": _VALUE_PUT,
    "api_v1_projects_related_kv_update": _VALUE_PUT,
    "api_v1_projects_kv:batchGet_create": _BATCH,
    "api_v1_projects_related_kv:batchGet_create": _BATCH,
    "api_v1_projects_knowledge_documents_create": _DOCUMENT_NEW,
    "api_v1_projects_related_knowledge_documents_create": _DOCUMENT_NEW,
    "api_v1_projects_knowledge_documents_update": _DOCUMENT_EDIT,
    "api_v1_projects_related_knowledge_documents_update": _DOCUMENT_EDIT,
    "api_v1_projects_knowledge_documents_partial_update": {"title": "Release notes (March)"},
    "api_v1_projects_related_knowledge_documents_partial_update": {
        "title": "Release notes (March)"
    },
    "api_v1_projects_entrypoints_run_create": _RUN,
    "api_v1_projects_related_entrypoints_run_create": _RUN,
}

_MEMBERS: Final = [
    {**ALICE, "role": "owner"},
    {"username": "bob", "displayName": "Bob Baker", "role": "developer"},
]
_PROJECT: Final = {
    "projectId": PROJECT,
    "name": "Roadmap",
    "type": "board",
    "role": "owner",
    "archived": False,
    "createdAt": AT,
    "members": _MEMBERS,
    "lastChange": {"at": LATER, **ALICE},
}
_CONFIGURATION: Final = {
    "id": "5a0c9e2b-7d41-4c3f-9e8a-1b2c3d4e5f60",
    "name": "Review week",
    "values": {"swimlanes": "assignee"},
    "active": True,
    "createdAt": AT,
    "updatedAt": LATER,
}
_DEFAULT_CONFIGURATION: Final = {
    "id": "default",
    "name": "Default",
    "values": {},
    "active": True,
    "createdAt": None,
    "updatedAt": None,
}
_INVITE: Final = {
    "id": 7,
    "role": "developer",
    "createdBy": "alice",
    "createdAt": AT,
    "expiresAt": LATER,
    "uses": 0,
    "maxUses": 1,
}
_ATTACHMENT: Final = {
    "id": ATTACHMENT,
    "card": "c1",
    "name": "plan.png",
    "contentType": "image/png",
    "size": 48213,
    "image": {"width": 1200, "height": 800},
    "uploadedBy": "alice",
    "uploadedAt": AT,
}
_DOCUMENT_SUMMARY: Final = {
    "id": "release-notes",
    "title": "Release notes",
    "markdownPreview": "# Release notes\n\n- Cards move between boards.\n",
    "size": 47,
    "updatedAt": AT,
}
_USAGE: Final = {
    "inputTokens": 12000,
    "outputTokens": 3400,
    "reasoningTokens": 800,
    "cachedInputTokens": 6000,
    "cacheCreationTokens": 1500,
    "calls": 42,
    "totalTokens": 15400,
    "malformed": False,
}
_BOARD: Final = {"id": PROJECT, "name": "Roadmap"}

#: Success answers by the component schema they render.
COMPONENTS: Final[dict[str, Any]] = {
    "Inbox": {
        "notifications": [
            {
                "id": 42,
                "text": "@bob can you review the release notes?",
                "board": _BOARD,
                "card": "c1",
                "url": f"/boards/{PROJECT}/?card=c1",
                "sender": ALICE,
                "via": "comment",
                "createdAt": AT,
                "read": False,
            }
        ],
        "unread": 1,
        "cursor": None,
    },
    "Read": {"read": 2},
    "OfferList": {
        "offers": [{"id": 3, "board": _BOARD, "role": "guest", "offeredBy": ALICE, "createdAt": AT}]
    },
    "Accepted": {"projectId": PROJECT},
    "ProjectList": {"projects": [_PROJECT]},
    "Project": _PROJECT,
    "AttachmentList": {
        "attachments": [
            {
                **_ATTACHMENT,
                "url": f"/attachments/{PATH_PARAMETERS['token']}/",
                "thumbnailUrl": f"/attachments/{PATH_PARAMETERS['token']}/?thumbnail=1",
            }
        ]
    },
    "Attachment": _ATTACHMENT,
    "ConfigurationList": {
        "activeId": "default",
        "configurations": [_DEFAULT_CONFIGURATION, {**_CONFIGURATION, "active": False}],
    },
    "Configuration": _CONFIGURATION,
    "ConfigurationDeleted": {"deleted": True, "active": _DEFAULT_CONFIGURATION},
    "EntrypointList": {"entrypoints": [{"id": "summarise", "title": "Summarise the week"}]},
    "InviteList": {"invites": [_INVITE]},
    "CreatedInvite": {
        **_INVITE,
        "url": "https://kanban.example.com/invites/Zm9yLWRhbmEtb25seQ/",
        "emailed": "dana@example.com",
    },
    "Revoked": {"revoked": True},
    "DocumentPage": {"documents": [_DOCUMENT_SUMMARY], "total": 1, "nextCursor": None},
    "DocumentSummary": {**_DOCUMENT_SUMMARY, "createdAt": AT, "revision": "12"},
    "Document": {
        "id": "release-notes",
        "title": "Release notes",
        "markdown": "# Release notes\n\n- Cards move between boards.\n",
        "createdAt": AT,
        "updatedAt": AT,
        "revision": "12",
    },
    "Deleted": {"deleted": True},
    "DocumentLines": {
        "documentId": "release-notes",
        "startLine": 1,
        "endLine": 3,
        "totalLines": 3,
        "lines": ["# Release notes", "", "- Cards move between boards."],
    },
    "SearchResult": {
        "results": [
            {
                "documentId": "release-notes",
                "title": "Release notes",
                "lineNumber": 3,
                "line": "- Cards move between boards.",
                "before": [""],
                "after": [],
            }
        ],
        "truncated": False,
    },
    "MemberList": {"members": _MEMBERS},
    "MemberOffered": {"changed": True, "offered": False},
    "MemberChanged": {"changed": True},
    "PendingOfferList": {
        "offers": [
            {
                "username": "carol",
                "displayName": "Carol Cole",
                "role": "guest",
                "offeredBy": "alice",
                "createdAt": AT,
            }
        ]
    },
    "Usage": _USAGE,
    "SystemUsage": {
        "total": _USAGE,
        "projects": [{**_USAGE, "projectId": PROJECT, "name": "Roadmap"}],
    },
    "CardSearch": {
        "results": [
            {
                "board": _BOARD,
                "card": {
                    "id": "c1",
                    "title": "Write the release notes",
                    "column": "doing",
                    "archived": False,
                },
                "matched": "title",
                "excerpt": "Write the release notes",
                "url": f"/boards/{PROJECT}/?card=c1",
            }
        ],
        "cursor": None,
    },
}

_ENTRY: Final = {
    "key": "settings/theme",
    "value": {"theme": "dark", "columns": 4},
    "revision": "42",
    "updatedAt": AT,
    "source": SOURCE,
}
_HISTORY: Final = {
    "entries": [
        {
            "revision": "42",
            "value": {"theme": "dark", "columns": 4},
            "source": SOURCE,
            "writtenAt": LATER,
        },
        {
            "revision": "41",
            "value": {"theme": "light", "columns": 4},
            "source": SOURCE,
            "writtenAt": AT,
        },
    ],
    "cursor": None,
}
_BATCH_RESULTS: Final = {
    "results": [
        {"found": True, "value": {"theme": "dark", "columns": 4}, "revision": "42"},
        {
            "found": True,
            "value": {"theme": "light", "columns": 3},
            "revision": "43",
            "source": {"user": "alice", "via": "mcp", "agent": "triage-bot"},
        },
        {"found": False},
    ]
}
_TRANSFERRED: Final = {
    "projectId": OTHER_PROJECT,
    "card": "c7",
    "column": "todo",
    "moved": False,
    "comments": 2,
    "attachments": 1,
    "assignees": ["bob"],
}
_REVISION: Final = {"revision": "43"}
_ENTRY_DELETED: Final = {"deleted": True}

#: Success answers without a component of their own, by operationId.
RESPONSES: Final[dict[str, Any]] = {
    "board_cards_csv": ",".join(CSV_HEADER)
    + "\r\nDoing,Write the release notes,For the March release,docs,bob,2026-03-09,1,3,2,no\r\n",
    "cards_copy": _TRANSFERRED,
    "cards_move": {**_TRANSFERRED, "moved": True},
    "api_v1_projects_history_kv_retrieve": _HISTORY,
    "api_v1_projects_related_history_kv_retrieve": _HISTORY,
    "api_v1_projects_history_kv_destroy": {"purged": 1},
    "api_v1_projects_kv:batchGet_create": _BATCH_RESULTS,
    "api_v1_projects_related_kv:batchGet_create": _BATCH_RESULTS,
    "board_archive_import": {
        "projectId": PROJECT,
        "boardName": "Roadmap",
        "dryRun": False,
        "created": True,
        "counts": {"cards": 12, "comments": 30, "attachments": 4},
        "offered": ["bob"],
        "notHere": ["erin"],
    },
}
for _domain in ("kv", "persistent_values", "conversations_kv", "conversations_persistent_values"):
    RESPONSES[f"api_v1_projects_{_domain}_retrieve"] = _ENTRY
    RESPONSES[f"api_v1_projects_{_domain}_update"] = _REVISION
    RESPONSES[f"api_v1_projects_{_domain}_destroy"] = _ENTRY_DELETED
RESPONSES["api_v1_projects_related_kv_retrieve"] = _ENTRY
RESPONSES["api_v1_projects_related_kv_update"] = _REVISION


def is_binary(media: dict[str, Any]) -> bool:
    """Bytes (an archive, a download) have no example worth stating in a schema."""
    return media.get("schema", {}).get("format") == "binary"


def attach_examples(result: dict[str, Any], **_: Any) -> dict[str, Any]:
    """drf-spectacular post-processing hook: the tables above, put where they belong."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict):
                _operation_examples(operation)
    return result


def _operation_examples(operation: dict[str, Any]) -> None:
    name = operation.get("operationId", "")
    for parameter in operation.get("parameters", []):
        if parameter.get("in") == "path" and parameter.get("name") in PATH_PARAMETERS:
            parameter["example"] = PATH_PARAMETERS[parameter["name"]]
    for media in (operation.get("requestBody") or {}).get("content", {}).values():
        if name in REQUESTS and not is_binary(media):
            media["example"] = REQUESTS[name]
    for status, response in operation.get("responses", {}).items():
        if not str(status).startswith("2"):
            continue
        for media in response.get("content", {}).values():
            ref = media.get("schema", {}).get("$ref", "")
            component = ref.rpartition("/")[2]
            if component in COMPONENTS:
                media["example"] = COMPONENTS[component]
            elif name in RESPONSES and not is_binary(media):
                media["example"] = RESPONSES[name]
