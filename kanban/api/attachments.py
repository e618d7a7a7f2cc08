"""REST endpoints for the files attached to a board's cards, and the download their signed
links lead to. Thin: parse, call one ``kanban.data.attachments`` service, render."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.core.files.uploadedfile import SimpleUploadedFile, UploadedFile
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kanban.access.relationships import ALIAS_PATTERN
from kanban.api.provenance import rest_provenance
from kanban.api.schema import anchored, operations, text
from kanban.data import attachments as actions
from storage.errors import invalid_argument

operation = operations("attachments")
OCTET_STREAM = "application/octet-stream"
CARD = OpenApiParameter(
    "card",
    text(max_length=actions.MAX_CARD_LENGTH),
    OpenApiParameter.QUERY,
    required=True,
    description="card id",
)
#: Whatever a file holds, a browser saves it: never renders it as a page, never guesses
#: its type, and runs nothing of it if it is opened anyway.
DOWNLOAD_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox; default-src 'none'",
    "Cache-Control": "private, no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class ImageSerializer(serializers.Serializer[Any]):
    width = serializers.IntegerField()
    height = serializers.IntegerField()


class AttachmentSerializer(serializers.Serializer[Any]):
    id = serializers.CharField()
    card = serializers.CharField()
    name = serializers.CharField()
    contentType = serializers.CharField(
        help_text="image/png, image/jpeg, image/webp, image/gif, else application/octet-stream"
    )
    size = serializers.IntegerField(help_text="bytes")
    image = ImageSerializer(allow_null=True, help_text="null unless the file is an image")
    uploadedBy = serializers.CharField()
    uploadedAt = serializers.DateTimeField()


class ListedAttachmentSerializer(AttachmentSerializer):
    url = serializers.CharField(help_text="download link for you only, short-lived")
    thumbnailUrl = serializers.CharField(allow_null=True, help_text="the cover (PNG); images")


class AttachmentListSerializer(serializers.Serializer[Any]):
    attachments = ListedAttachmentSerializer(many=True)


UPLOAD = {
    "type": "object",
    "required": ["card", "file"],
    "properties": {
        "card": text(max_length=actions.MAX_CARD_LENGTH),
        "file": {"type": "string", "format": "binary"},
        "alias": {
            **text(pattern=anchored(ALIAS_PATTERN)),
            "description": "the card is on the project this board relates to under this alias "
            "(the bridge's uploads): the grants of that relationship decide",
        },
    },
}


def uploaded_file(request: Request) -> UploadedFile:
    """The form field ``file``; a part sent without a file name (RFC 7578 makes one
    optional) is its text as the file's bytes."""
    upload = request.FILES.get("file")
    if upload is not None:
        return upload
    sent = request.data.get("file")
    if isinstance(sent, str):
        return SimpleUploadedFile("file", sent.encode("utf-8"), OCTET_STREAM)
    raise invalid_argument("send the file as the form field `file`", field="file")


def query_card(request: Request) -> str:
    card = request.query_params.get("card")
    if not card:
        raise invalid_argument("name the card: ?card=", field="card")
    return card


class AttachmentListView(APIView):
    parser_classes = [MultiPartParser]

    @operation(
        "attachments_list",
        parameters=[CARD],
        description="A card's attachments, oldest first, with download links made for you.",
        responses={200: AttachmentListSerializer},
    )
    def get(self, request: Request, project_id: Any) -> Response:
        found = actions.attachment_list(
            user=request.user, project_id=project_id, card=query_card(request)
        )
        return Response({"attachments": found})

    @operation(
        "attachments_upload",
        request={"multipart/form-data": UPLOAD},
        description="Attach a file to a card (developers and owners). Its bytes count in the "
        "board's storage quota; at most KANBAN_ATTACHMENT_BYTES each. An image (PNG, JPEG, "
        "WebP, GIF) gets a cover thumbnail.",
        responses={201: AttachmentSerializer},
    )
    def post(self, request: Request, project_id: Any) -> Response:
        upload = uploaded_file(request)
        card = request.data.get("card")
        if not isinstance(card, str) or not card:
            raise invalid_argument("name the card as the form field `card`", field="card")
        alias = request.data.get("alias")
        if alias is not None and not isinstance(alias, str):
            raise invalid_argument("alias must be text", field="alias")
        with upload:
            shown = actions.attachment_upload(
                user=request.user,
                project_id=project_id,
                alias=alias,
                card=card,
                name=upload.name or "file",
                content_type=upload.content_type or "",
                stream=upload,
                provenance=rest_provenance(request),
            )
        return Response(shown, status=201)


class AttachmentView(APIView):
    @operation(
        "attachments_delete",
        parameters=[CARD],
        description="Remove an attachment from its card (developers and owners); its bytes "
        "leave the board's quota.",
        responses={204: None},
    )
    def delete(self, request: Request, project_id: Any, attachment_id: str) -> Response:
        actions.attachment_delete(
            user=request.user,
            project_id=project_id,
            card=query_card(request),
            attachment_id=attachment_id,
            provenance=rest_provenance(request),
        )
        return Response(status=204)


class AttachmentDownloadView(APIView):
    @operation(
        "attachments_download",
        description="The file behind a link from the list, for the person it was made for, "
        "while they may read the board: an image inline, anything else as a download.",
        responses={
            # Whatever the file is: the content type stored with it (octet-stream unless
            # Pillow read it as an image).
            (200, "*/*"): OpenApiResponse(response=OpenApiTypes.BINARY, description="the file"),
        },
    )
    def get(self, request: Request, token: str) -> FileResponse:
        download = actions.attachment_open(user=request.user, token=token)
        response = FileResponse(download.file, content_type=download.content_type)
        response["Content-Length"] = str(download.size)
        # An image (served as one only if Pillow read it as one) opens in the tab; anything
        # else is saved. Either way nosniff and the sandbox CSP hold.
        disposition = "attachment" if download.content_type == OCTET_STREAM else "inline"
        response["Content-Disposition"] = f"{disposition}; filename*=UTF-8''{quote(download.name)}"
        for name, value in DOWNLOAD_HEADERS.items():
            response[name] = value
        return response
