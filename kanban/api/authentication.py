from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from kanban.accounts.tokens import token_authenticate
from kanban.models import ApiToken
from storage.errors import ErrorCode, KanbanError


class BearerTokenAuthentication(BaseAuthentication):
    """``Authorization: Bearer <token>``; anything else falls through to the session."""

    def authenticate(self, request: Request) -> tuple[Any, ApiToken] | None:
        header = get_authorization_header(request).split()
        if not header or header[0].lower() != b"bearer":
            return None
        if len(header) != 2:
            raise KanbanError(ErrorCode.UNAUTHENTICATED, "malformed Authorization header")
        try:
            plaintext = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise KanbanError(ErrorCode.UNAUTHENTICATED, "malformed bearer token") from None
        token = token_authenticate(plaintext=plaintext)
        if token is None:
            raise KanbanError(ErrorCode.UNAUTHENTICATED, "invalid, expired or revoked token")
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Describes the bearer token in the OpenAPI schema."""

    target_class = "kanban.api.authentication.BearerTokenAuthentication"
    name = "bearerToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "`manage.py create_token`"}
