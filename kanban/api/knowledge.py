"""REST endpoints for the project Knowledge base, the current project's and a related
project's by alias. Thin: parse, call one ``kanban.data.knowledge`` action, render its
``as_dict()`` (the same shapes the bridge returns)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.api.configurations import check_body
from kanban.api.parsers import StrictJSONParser
from kanban.api.provenance import WRITE_HEADERS, rest_provenance
from kanban.api.query import whole_number
from kanban.api.schema import REVISION, anchored, json_body, operations, text, whole
from kanban.data import knowledge as actions
from kanban.data.target import Target
from storage import limits
from storage.errors import invalid_argument
from storage.knowledge_format import CURSOR_RE, DOCUMENT_ID_RE
from storage.knowledge_rules import MAX_CONTEXT_LINES, MAX_QUERY_LENGTH, MAX_TITLE_LENGTH


class DocumentJSONParser(StrictJSONParser):
    """A document may be larger than a KV value, and JSON escaping makes its body larger
    still; the markdown limit is then checked exactly."""

    def max_bytes(self) -> int:
        return limits.document_json_bytes(int(settings.KANBAN_MAX_DOCUMENT_BYTES))


#: The bound the schema states for a Knowledge line parameter (more lines than any
#: document); past it the service refuses the line, in its own words.
MAX_QUERY_INT = 10**9 - 1


def query_int(params: Mapping[str, str], name: str) -> int | None:
    """An optional non-negative integer query parameter (its range is the service's)."""
    raw = params.get(name)
    if raw is None or raw == "":
        return None
    return whole_number(raw, field=name)


# --- OpenAPI (documentation only; the services' ``as_dict()`` render) ------------------------


class AbstractSerializer(serializers.Serializer[Any]):
    id = serializers.CharField()
    title = serializers.CharField()
    markdownPreview = serializers.CharField(help_text="at most the first 240 characters")
    size = serializers.IntegerField(help_text="UTF-8 bytes of the markdown")
    updatedAt = serializers.DateTimeField()


class DocumentPageSerializer(serializers.Serializer[Any]):
    documents = AbstractSerializer(many=True)
    total = serializers.IntegerField()
    nextCursor = serializers.CharField(
        allow_null=True, help_text="opaque; pass back as `cursor`; null after the last page"
    )


class DocumentSerializer(serializers.Serializer[Any]):
    id = serializers.CharField()
    title = serializers.CharField()
    markdown = serializers.CharField()
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()
    revision = serializers.CharField(help_text="pass as `expectedRevision` to edit safely")


class DocumentSummarySerializer(AbstractSerializer):
    createdAt = serializers.DateTimeField()
    revision = serializers.CharField()


class SearchHitSerializer(serializers.Serializer[Any]):
    documentId = serializers.CharField()
    title = serializers.CharField()
    lineNumber = serializers.IntegerField(help_text="1-based")
    line = serializers.CharField()
    before = serializers.ListField(child=serializers.CharField())
    after = serializers.ListField(child=serializers.CharField())


class SearchResultSerializer(serializers.Serializer[Any]):
    results = SearchHitSerializer(many=True)
    truncated = serializers.BooleanField()


class DocumentLinesSerializer(serializers.Serializer[Any]):
    documentId = serializers.CharField()
    startLine = serializers.IntegerField()
    endLine = serializers.IntegerField()
    totalLines = serializers.IntegerField()
    lines = serializers.ListField(child=serializers.CharField())


class DeletedSerializer(serializers.Serializer[Any]):
    deleted = serializers.BooleanField(help_text="false when there was no such document")


TITLE = text(max_length=MAX_TITLE_LENGTH)
MARKDOWN = {"type": "string", "description": "UTF-8 markdown, at most 8 MiB by default"}
EXPECTED = {**REVISION, "description": "edit only if the document is at this revision"}
DOCUMENT_ID_SCHEMA = text(pattern=anchored(DOCUMENT_ID_RE))


DOCUMENT_ID = OpenApiParameter(
    "document_id", DOCUMENT_ID_SCHEMA, OpenApiParameter.PATH, description="a document id"
)
CURSOR = OpenApiParameter(
    "cursor", text(pattern=anchored(CURSOR_RE)), description="`nextCursor` of the previous page"
)
#: One line of text: a query matches within a line.
ONE_LINE = "^[^\\u0000\\n\\r]*$"
SEARCH = [
    OpenApiParameter(
        "query",
        text(max_length=MAX_QUERY_LENGTH, pattern=ONE_LINE),
        required=True,
        description="case-insensitive, one line",
    ),
    OpenApiParameter("documentId", DOCUMENT_ID_SCHEMA, description="search this document only"),
    OpenApiParameter(
        "beforeLines",
        whole(minimum=0, maximum=MAX_CONTEXT_LINES),
        description="context lines above a hit",
    ),
    OpenApiParameter(
        "afterLines",
        whole(minimum=0, maximum=MAX_CONTEXT_LINES),
        description="context lines below a hit",
    ),
]
LINES = [
    OpenApiParameter(
        "start",
        whole(minimum=1, maximum=MAX_QUERY_INT),
        required=True,
        description="first line, 1-based",
    ),
    OpenApiParameter(
        "end",
        whole(minimum=1, maximum=MAX_QUERY_INT),
        description="last line, inclusive; default the last",
    ),
]
operation = operations("knowledge")


# --- views -----------------------------------------------------------------------------------


class KnowledgeView(APIView):
    """A project's Knowledge base; under `related/{alias}/`, the related project's, as its
    knowledge grant allows (listing and searching need the whole grant)."""

    related: ClassVar[bool] = False
    parser_classes = [DocumentJSONParser]

    def target(self, kwargs: Mapping[str, Any]) -> Target:
        alias = kwargs["alias"] if self.related else None
        return Target(user=self.request.user, project_id=kwargs["project_id"], alias=alias)


class DocumentListView(KnowledgeView):
    @operation(
        "knowledge_documents_list",
        parameters=[CURSOR],
        responses={200: DocumentPageSerializer},
    )
    def get(self, request: Request, **kwargs: Any) -> Response:
        found = actions.project_knowledge_list(
            cursor=request.query_params.get("cursor"), target=self.target(kwargs)
        )
        return Response(found.as_dict())

    @operation(
        request=json_body(
            required=("title", "markdown"),
            title=TITLE,
            markdown=MARKDOWN,
            id={
                **DOCUMENT_ID_SCHEMA,
                "nullable": True,
                "description": "a stable id; generated when null or left out",
            },
        ),
        parameters=WRITE_HEADERS,
        responses={201: DocumentSummarySerializer},
    )
    def post(self, request: Request, **kwargs: Any) -> Response:
        body = check_body(
            request.data, allowed=("title", "markdown", "id"), required=("title", "markdown")
        )
        created = actions.project_knowledge_create(
            title=body["title"],
            markdown=body["markdown"],
            document_id=body.get("id"),
            provenance=rest_provenance(self.request),
            target=self.target(kwargs),
        )
        return Response(created.as_dict(), status=201)


class DocumentView(KnowledgeView):
    http_method_names = ["get", "patch", "put", "delete", "options"]

    @operation(parameters=[DOCUMENT_ID], responses={200: DocumentSerializer})
    def get(self, request: Request, document_id: str, **kwargs: Any) -> Response:
        found = actions.project_knowledge_get(document_id=document_id, target=self.target(kwargs))
        return Response(found.as_dict())

    def _edit(self, document_id: str, body: dict[str, Any], kwargs: Mapping[str, Any]) -> Response:
        extra: dict[str, Any] = {}
        if "expectedRevision" in body:
            extra["expected_revision"] = body["expectedRevision"]
        edited = actions.project_knowledge_edit(
            document_id=document_id,
            title=body.get("title"),
            markdown=body.get("markdown"),
            provenance=rest_provenance(self.request),
            **extra,
            target=self.target(kwargs),
        )
        return Response(edited.as_dict())

    @operation(
        parameters=[DOCUMENT_ID, *WRITE_HEADERS],
        request={
            "application/json": {
                **json_body(title=TITLE, markdown=MARKDOWN, expectedRevision=EXPECTED)[
                    "application/json"
                ],
                # An edit changes something: the title, the markdown or both.
                "anyOf": [{"required": ["title"]}, {"required": ["markdown"]}],
            }
        },
        responses={200: DocumentSummarySerializer},
    )
    def patch(self, request: Request, document_id: str, **kwargs: Any) -> Response:
        """Change the title, the markdown or both."""
        body = check_body(request.data, allowed=("title", "markdown", "expectedRevision"))
        return self._edit(document_id, body, kwargs)

    @operation(
        parameters=[DOCUMENT_ID, *WRITE_HEADERS],
        request=json_body(
            required=("title", "markdown"),
            title=TITLE,
            markdown=MARKDOWN,
            expectedRevision=EXPECTED,
        ),
        responses={200: DocumentSummarySerializer},
    )
    def put(self, request: Request, document_id: str, **kwargs: Any) -> Response:
        """Replace the title and the markdown of an existing document."""
        body = check_body(
            request.data,
            allowed=("title", "markdown", "expectedRevision"),
            required=("title", "markdown"),
        )
        return self._edit(document_id, body, kwargs)

    @operation(
        parameters=[DOCUMENT_ID, *WRITE_HEADERS],
        responses={200: DeletedSerializer},
    )
    def delete(self, request: Request, document_id: str, **kwargs: Any) -> Response:
        deleted = actions.project_knowledge_delete(
            document_id=document_id,
            provenance=rest_provenance(self.request),
            target=self.target(kwargs),
        )
        return Response({"deleted": deleted})


class DocumentLinesView(KnowledgeView):
    @operation(
        parameters=[DOCUMENT_ID, *LINES],
        responses={200: DocumentLinesSerializer},
    )
    def get(self, request: Request, document_id: str, **kwargs: Any) -> Response:
        start = query_int(request.query_params, "start")
        if start is None:
            raise invalid_argument("start is required", field="start")
        found = actions.project_knowledge_read_lines(
            document_id=document_id,
            start_line=start,
            end_line=query_int(request.query_params, "end"),
            target=self.target(kwargs),
        )
        return Response(found.as_dict())


class SearchView(KnowledgeView):
    @operation(parameters=SEARCH, responses={200: SearchResultSerializer})
    def get(self, request: Request, **kwargs: Any) -> Response:
        params = request.query_params
        found = actions.project_knowledge_search(
            query=params.get("query", ""),
            document_id=params.get("documentId") or None,
            before_lines=query_int(params, "beforeLines") or 0,
            after_lines=query_int(params, "afterLines") or 0,
            target=self.target(kwargs),
        )
        return Response(found.as_dict())


@extend_schema_view(get=extend_schema(operation_id="related_knowledge_documents_list"))
class RelatedDocumentListView(DocumentListView):
    related = True


class RelatedDocumentView(DocumentView):
    related = True


class RelatedDocumentLinesView(DocumentLinesView):
    related = True


class RelatedSearchView(SearchView):
    related = True
