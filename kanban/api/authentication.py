from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from kanban.accounts.tokens import token_for_rest, token_from_authorization
from kanban.models import ApiToken


class BearerTokenAuthentication(BaseAuthentication):
    """``Authorization: Bearer <token>``; anything else falls through to the session."""

    def authenticate(self, request: Request) -> tuple[Any, ApiToken] | None:
        token = token_from_authorization(get_authorization_header(request))
        return None if token is None else (token.user, token_for_rest(token))

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Describes the bearer token in the OpenAPI schema."""

    target_class = "kanban.api.authentication.BearerTokenAuthentication"
    name = "bearerToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal access token (account page, or `manage.py create_token`)",
        }
