"""mozilla-django-oidc's authentication backend, given the provider's endpoints from discovery
and this server's checks (``kanban.accounts.oidc``): the library makes the token request (the
code, PKCE's verifier, the client's secret by HTTP Basic); the answers are read bounded, the
ID token checked whole and the account found by issuer and subject."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from kanban.accounts.oidc import (
    Provider,
    oidc_account,
    oidc_fetch,
    oidc_id_token_claims,
    oidc_provider,
    refused,
)


class OidcBackend(OIDCAuthenticationBackend):
    """Signs in only when the sign-in page's callback calls it (``nonce`` and
    ``code_verifier`` are keyword-only, so ``django.contrib.auth.authenticate`` with a
    username and password passes it by); otherwise it only finds a session's user."""

    provider: Provider

    def __init__(self) -> None:
        # Made for every signed-in request (``get_user``): the provider is read only when
        # someone signs in.
        self.UserModel = get_user_model()
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO

    def authenticate(
        self, request: HttpRequest, *, nonce: str | None, code_verifier: str | None
    ) -> User:
        """The person the callback's code stands for, or a ``KanbanError`` saying why not."""
        self.provider = oidc_provider()
        self.OIDC_OP_TOKEN_ENDPOINT = self.provider.token_endpoint
        self.OIDC_OP_USER_ENDPOINT = self.provider.userinfo_endpoint
        self.OIDC_OP_JWKS_ENDPOINT = self.provider.jwks_uri
        user: User | None = super().authenticate(request, nonce=nonce, code_verifier=code_verifier)
        if user is None:  # the library's own refusals (no code or state) end here
            raise refused("The sign-in provider's answer had no code.")
        return user

    def get_token(self, payload: dict[str, Any]) -> dict[str, Any]:
        client_id, secret = payload.pop("client_id"), payload.pop("client_secret")
        answer = oidc_fetch(
            self.OIDC_OP_TOKEN_ENDPOINT,
            what="token answer",
            data=payload,
            auth=(client_id, secret),
            headers={"Accept": "application/json"},
        )
        body = answer.json(what="token answer")
        if answer.status != 200:
            # invalid_grant: a code used before, expired, or not this client's (RFC 6749 5.2).
            error = str(body.get("error", answer.status))[:80]
            described = str(body.get("error_description", ""))[:200]
            raise refused(
                f"The sign-in provider refused the sign-in code ({error}"
                f"{': ' + described if described else ''})."
            )
        return body

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        return oidc_id_token_claims(provider=self.provider, token=token, nonce=kwargs.get("nonce"))

    def get_userinfo(
        self, access_token: str, id_token: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        if not isinstance(access_token, str) or not access_token:
            raise refused("The sign-in provider sent no access token.")
        answer = oidc_fetch(
            self.OIDC_OP_USER_ENDPOINT,
            what="claims (userinfo)",
            headers={"Authorization": f"Bearer {access_token}", "Accept": "application/json"},
        )
        if answer.status != 200:
            raise refused(f"The sign-in provider refused its claims ({answer.status}).")
        claims = answer.json(what="claims (userinfo)")
        # The claims must be of the person the ID token names (OpenID Connect Core 5.3.2).
        if claims.get("sub") != payload.get("sub"):
            raise refused("The sign-in provider's claims are of another person.")
        return {**payload, **claims}

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> User:
        claims = self.get_userinfo(access_token, id_token, payload)
        return oidc_account(issuer=self.provider.issuer, claims=claims)

    def get_user(self, user_id: Any) -> User | None:
        # Django's own: a session of an account turned off ends at its next request (the
        # library's finds the account whatever its state).
        user: User | None = ModelBackend.get_user(self, user_id)
        return user
