"""REST endpoints for board archives (docs/board-archive.md): download a board's archive,
import one, and the cards as CSV. Thin: parse, call one service, render."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import IO, Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.api.projects import check_flag
from kanban.api.schema import operations
from kanban.imports.board_archive import archive_bytes_limit, board_archive_import
from kanban.imports.board_export import board_cards_csv, board_export
from storage.errors import ErrorCode, KanbanError

operation = operations("projects")
ZIP = "application/zip"


class _FileRenderer(BaseRenderer):
    """Passes a file's bytes through; an error (a dict) still goes out as JSON."""

    charset = None

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if isinstance(data, bytes | str):
            return data.encode() if isinstance(data, str) else data
        return json.dumps(data).encode()


class ZipRenderer(_FileRenderer):
    media_type = ZIP
    format = "zip"


class CsvRenderer(_FileRenderer):
    media_type = "text/csv"
    format = "csv"


class ArchiveParser(BaseParser):
    """The archive's bytes as they came, up to the import's limit."""

    media_type = ZIP

    def parse(
        self,
        stream: IO[Any] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:  # bytes: DRF's stubs allow only a mapping here
        if stream is None:
            return b""
        limit = archive_bytes_limit()
        data = stream.read(limit + 1)
        if len(data) > limit:
            raise KanbanError(ErrorCode.TOO_LARGE, f"a board archive may be at most {limit} bytes")
        return bytes(data)


class OctetArchiveParser(ArchiveParser):
    media_type = "application/octet-stream"


def _download(data: bytes | str, *, content_type: str, name: str) -> HttpResponse:
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


class BoardArchiveView(APIView):
    renderer_classes = [JSONRenderer, ZipRenderer]

    @operation(
        "board_archive_get",
        description="The board's archive (a zip: docs/board-archive.md) for a developer or "
        "owner: package, plugin files, every KV and PersistentValue value, members.",
        parameters=[OpenApiParameter("history", bool, description="include kept versions")],
        responses={(200, ZIP): OpenApiResponse(response=OpenApiTypes.BINARY)},
    )
    def get(self, request: Request, project_id: Any) -> HttpResponse:
        history = check_flag(request.query_params.get("history"), field="history")
        data = board_export(actor=request.user, project_id=project_id, history=history)
        return _download(data, content_type=ZIP, name=f"board-{project_id}.zip")


class BoardCardsCsvView(APIView):
    renderer_classes = [JSONRenderer, CsvRenderer]

    @operation(
        "board_cards_csv",
        description="The board's cards as CSV (column, title, description, labels, "
        "assignees, due, checklist done and total, comments, archived); a cell a "
        "spreadsheet would run as a formula starts with `'`.",
        responses={(200, "text/csv"): OpenApiResponse(response=OpenApiTypes.STR)},
    )
    def get(self, request: Request, project_id: Any) -> HttpResponse:
        text = board_cards_csv(actor=request.user, project_id=project_id)
        return _download(
            text.encode("utf-8"), content_type="text/csv; charset=utf-8", name="cards.csv"
        )


class BoardArchiveImportView(APIView):
    parser_classes = [ArchiveParser, OctetArchiveParser]

    @operation(
        "board_archive_import",
        description="Import a board archive as a board the caller owns; an archive of a "
        "board imported before updates that board (its owners only). Members with an "
        "account here are offered the board. `dryRun`: the report, nothing written.",
        parameters=[OpenApiParameter("dryRun", bool, description="report only")],
        # Documented as octet-stream, which every client (and schemathesis) can send;
        # application/zip is taken too.
        request={"application/octet-stream": OpenApiTypes.BINARY},
        responses={
            200: OpenApiResponse(
                response=OpenApiTypes.OBJECT,
                description='{"projectId","boardName","dryRun","created","counts",'
                '"offered","notHere"}',
            ),
        },
    )
    def post(self, request: Request) -> Response:
        dry_run = check_flag(request.query_params.get("dryRun"), field="dryRun")
        data = request.data
        if not isinstance(data, bytes):
            raise KanbanError(ErrorCode.INVALID_ARGUMENT, "send the archive as application/zip")
        report = board_archive_import(actor=request.user, data=data, dry_run=dry_run)
        return Response(report.as_dict())
