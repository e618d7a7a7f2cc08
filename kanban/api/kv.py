"""REST endpoints for KV, PersistentValue and related KV. Thin: parse, call, render."""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.api.provenance import WRITE_HEADERS, rest_provenance
from kanban.api.query import check_query
from kanban.api.schema import REVISION, json_body, object_answer, operations, text, whole
from kanban.data import kv as kv_actions
from kanban.data.kv import WRITE_ACTIONS, Provenance
from kanban.data.target import Target
from storage.errors import invalid_argument
from storage.history import MAX_HISTORY_LIMIT
from storage.limits import MAX_BATCH_KEYS, MAX_KEY_CHARS
from storage.namespaces import Domain

#: What a read names as its provenance: nothing is recorded of it.
READ = Provenance(via="api")
_PUT_FIELDS = frozenset({"value", "expectedRevision"})
operation = operations()


def check_put_body(data: Any) -> dict[str, Any]:
    """``{"value": ..., "expectedRevision"?: "<rev>" | null}`` and nothing else."""
    if not isinstance(data, dict):
        raise invalid_argument('the body must be a JSON object {"value": ...}')
    extra = sorted(set(data) - _PUT_FIELDS)
    if extra:
        raise invalid_argument(f"unknown field {extra[0]!r}", field=extra[0])
    if "value" not in data:
        raise invalid_argument('the body needs a "value"', field="value")
    return data


WRITTEN = object_answer(
    '{"revision"}', revision={"type": "string", "description": "the value's new revision"}
)
DELETED = object_answer(
    '{"deleted"}', deleted={"type": "boolean", "description": "false: nothing was stored"}
)
ENTRY = OpenApiResponse(
    response=OpenApiTypes.OBJECT, description='{"key","value","revision","updatedAt","source"}'
)
PUT_BODY = json_body(
    required=("value",),
    value={"description": "any JSON value"},
    expectedRevision={**REVISION, "nullable": True},
)
KEY = OpenApiParameter(
    "key",
    text(max_length=MAX_KEY_CHARS),
    OpenApiParameter.PATH,
    description="percent-encoded key (may contain / and :)",
)


class TargetView(APIView):
    """A view of the dataset its URL names: the project's ``domain`` (of a conversation,
    when the URL names one) or, with ``related``, the KV of the project ``related/{alias}/``
    names."""

    domain: ClassVar[Domain] = "kv"
    related: ClassVar[bool] = False

    def target(self, kwargs: dict[str, Any]) -> Target:
        user, project_id = self.request.user, kwargs["project_id"]
        if self.related:
            return Target(user=user, project_id=project_id, alias=kwargs["alias"])
        return Target(
            user=user,
            project_id=project_id,
            domain=self.domain,
            conversation_id=kwargs.get("conversation_id"),
        )


class EntryView(TargetView):
    """One key of one dataset: ``GET`` / ``PUT`` / ``DELETE``."""

    def _call(self, action: str, key: str, kwargs: dict[str, Any], **arguments: Any) -> Any:
        return kv_actions.kv_action(
            action=action,
            arguments={"key": key, **arguments},
            # Only a write records where it came from (and reads its headers).
            provenance=rest_provenance(self.request) if action in WRITE_ACTIONS else READ,
            target=self.target(kwargs),
        )

    @operation(parameters=[KEY], responses={200: ENTRY})
    def get(self, request: Request, key: str, **kwargs: Any) -> Response:
        return Response(self._call("entry", key, kwargs))

    @operation(
        parameters=[KEY, *WRITE_HEADERS],
        request=PUT_BODY,
        responses={200: WRITTEN},
    )
    def put(self, request: Request, key: str, **kwargs: Any) -> Response:
        return Response(self._call("set", key, kwargs, **check_put_body(request.data)))

    @operation(parameters=[KEY], responses={200: DELETED})
    def delete(self, request: Request, key: str, **kwargs: Any) -> Response:
        return Response(self._call("delete", key, kwargs))


class KvView(EntryView):
    domain = "kv"


class PersistentValueView(EntryView):
    domain = "persistentValue"


class RelatedKvView(EntryView):
    """Related KV by alias: get and put only (no list, no delete)."""

    related = True
    http_method_names = ["get", "put", "options"]


BATCH_BODY = json_body(
    required=("keys",),
    keys={
        "type": "array",
        "items": text(max_length=MAX_KEY_CHARS),
        "minItems": 1,
        "maxItems": MAX_BATCH_KEYS,
        "description": "the keys to read, each named (there is no listing)",
    },
)
BATCH_RESULTS = OpenApiResponse(
    response=OpenApiTypes.OBJECT,
    description='{"results": [...]}: per key in the order asked, {"found": true, "value", '
    '"revision"} (with "source": {"user", "via", "agent"?, "runId"?, "conversationId"?} when an '
    "agent made the value's last write: it names an agent, came through MCP, or names a run or "
    'a conversation), {"found": false}, or {"found": false, "error": {"code", "message"}} for a '
    "key the grant does not open (forbidden) or past the read's byte budget (too_large)",
)


def check_batch_body(data: Any) -> Any:
    """``{"keys": [...]}`` and nothing else."""
    if not isinstance(data, dict) or set(data) != {"keys"}:
        raise invalid_argument('the body must be a JSON object {"keys": [...]}')
    return data["keys"]


class BatchGetView(TargetView):
    """``POST .../kv:batchGet``: up to 256 named keys of the project's (or, through an alias,
    the related project's) KV in one request and one database round trip."""

    reads_only: ClassVar[bool] = True  # a POST only for the size of its key list

    @operation(request=BATCH_BODY, responses={200: BATCH_RESULTS})
    def post(self, request: Request, **kwargs: Any) -> Response:
        results = kv_actions.kv_action(
            action="getMany",
            target=self.target(kwargs),
            arguments={"keys": check_batch_body(request.data)},
            provenance=READ,
        )
        return Response({"results": results})


class RelatedBatchGetView(BatchGetView):
    related = True


HISTORY = OpenApiResponse(
    response=OpenApiTypes.OBJECT,
    description='{"entries": [{"revision", "value", "deleted"?, "source", "writtenAt"}], '
    '"cursor"}: the key\'s kept versions, newest first (its current value first); pass '
    "`cursor` as `before` for older ones (null: no more)",
)
HISTORY_PARAMETERS = [
    KEY,
    OpenApiParameter(
        "limit", whole(minimum=1, maximum=MAX_HISTORY_LIMIT), description="versions per page"
    ),
    OpenApiParameter("before", REVISION, description="the `cursor` of the page before"),
]


def check_history_query(query: Any) -> dict[str, Any]:
    return check_query(query, allowed=("limit", "before"), numbers=("limit",))


class HistoryView(TargetView):
    """``GET .../history/kv/{key}``: one key's kept versions, under the key's read rule;
    ``DELETE``: the owner purges them."""

    @operation(parameters=HISTORY_PARAMETERS, responses={200: HISTORY})
    def get(self, request: Request, key: str, **kwargs: Any) -> Response:
        history = kv_actions.kv_action(
            action="history",
            target=self.target(kwargs),
            arguments={"key": key, **check_history_query(request.query_params)},
            provenance=READ,
        )
        return Response(history)

    @operation(
        parameters=[KEY],
        responses={
            200: object_answer(
                '{"purged"}: versions deleted', purged={"type": "integer", "minimum": 0}
            )
        },
    )
    def delete(self, request: Request, key: str, **kwargs: Any) -> Response:
        """The owner deletes every kept version of the key (its current value stays), which
        count toward the project's storage quota until then."""
        return Response(
            kv_actions.project_kv_history_purge(
                user=request.user, project_id=kwargs["project_id"], key=key
            )
        )


class RelatedHistoryView(HistoryView):
    related = True
    http_method_names = ["get", "options"]
