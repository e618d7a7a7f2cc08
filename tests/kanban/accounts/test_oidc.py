"""Single sign-on's rules without a browser (the redirect dance is tests/browser/test_oidc.py):
the settings refuse a mistake at start; discovery is read once and kept, and a provider that
is down or names another issuer is refused; an ID token is checked whole; and the account a
sign-in is: found by issuer and subject, made under sign-up's username rule, never someone
else's, staff as the provider's group says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from kanban.accounts import oidc
from kanban.accounts.oidc import (
    Provider,
    oidc_account,
    oidc_fetch,
    oidc_forget,
    oidc_id_token_claims,
    oidc_provider,
)
from kanban.settings import BASE_DIR, oidc_issuer_from_env
from kanban.web.sign_in import BACKEND
from storage.errors import ErrorCode, KanbanError
from tests.factories import a_user
from tests.live import free_port
from tests.oidc.provider import CLIENT_ID, OidcProvider

ISSUER = "https://id.example.com"


@pytest.fixture(autouse=True)
def forget_providers() -> Iterator[None]:
    oidc_forget()
    yield
    oidc_forget()


# Settings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("issuer", "says"),
    [
        ("http://id.example.com", "must be https://"),
        ("https://id.example.com/?tenant=1", "must be an https:// issuer URL"),
        ("id.example.com", "must be an https:// issuer URL"),
    ],
)
def test_an_issuer_that_is_not_https_is_refused(
    issuer: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KANBAN_OIDC_ISSUER", issuer)
    with pytest.raises(ImproperlyConfigured, match=says.replace("?", r"\?")):
        oidc_issuer_from_env("KANBAN_OIDC_ISSUER")


def test_http_is_for_a_provider_on_this_machine_and_a_trailing_slash_goes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KANBAN_OIDC_ISSUER", "http://127.0.0.1:9000/")
    assert oidc_issuer_from_env("KANBAN_OIDC_ISSUER") == "http://127.0.0.1:9000"


def start_with(**env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KANBAN_OIDC_")}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); print('started')"],
        env={**environment, "DJANGO_SETTINGS_MODULE": "kanban.settings", **env},
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_server_with_half_a_configuration_does_not_start() -> None:
    no_secret = start_with(KANBAN_OIDC_ISSUER=ISSUER, KANBAN_OIDC_CLIENT_ID="kanban")
    assert no_secret.returncode != 0
    assert "KANBAN_OIDC_CLIENT_SECRET is needed when KANBAN_OIDC_ISSUER is set" in no_secret.stderr
    no_issuer = start_with(KANBAN_OIDC_ENFORCED="1")
    assert no_issuer.returncode != 0
    assert "KANBAN_OIDC_ENFORCED means nothing without KANBAN_OIDC_ISSUER" in no_issuer.stderr


# Discovery -------------------------------------------------------------------------------


def test_discovery_is_read_once_and_kept_and_a_provider_that_is_down_is_refused(
    settings: Any,
) -> None:
    provider = OidcProvider.start()
    try:
        settings.KANBAN_OIDC_ISSUER = provider.issuer
        found = oidc_provider()
        assert found.token_endpoint == f"{provider.issuer}/token"
        assert found.jwks_uri == f"{provider.issuer}/jwks"
    finally:
        provider.stop()
    assert oidc_provider() == found, "kept: the provider is not asked again"

    oidc_forget()
    started = time.monotonic()
    with pytest.raises(KanbanError) as down:
        oidc_provider()
    assert down.value.code == ErrorCode.UNAVAILABLE
    assert "does not answer (discovery document: ConnectionError)" in down.value.message
    assert time.monotonic() - started < 5


class Discovery(BaseHTTPRequestHandler):
    """A provider that answers its discovery document, counting the times it is asked."""

    asked = 0

    def do_GET(self) -> None:
        Discovery.asked += 1
        at = f"http://127.0.0.1:{self.server.server_address[1]}"
        names = ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri")
        document = {"issuer": at, **{name: f"{at}/{name}" for name in names}}
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps(document).encode())

    def log_message(self, *args: Any) -> None:
        pass


def test_a_provider_that_did_not_answer_is_not_asked_again_for_a_few_seconds(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(oidc, "DOWN_SECONDS", 0.5)  # a few seconds, shortened
    port = free_port()
    settings.KANBAN_OIDC_ISSUER = f"http://127.0.0.1:{port}"
    with pytest.raises(KanbanError, match="does not answer"):
        oidc_provider()
    server = ThreadingHTTPServer(("127.0.0.1", port), Discovery)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        Discovery.asked = 0
        with pytest.raises(KanbanError, match="does not answer"):
            oidc_provider()
        assert Discovery.asked == 0, "refused at once, nobody waiting on a provider that is down"
        time.sleep(oidc.DOWN_SECONDS)
        assert oidc_provider().token_endpoint.endswith("/token_endpoint")
        assert Discovery.asked == 1
    finally:
        server.shutdown()
        server.server_close()


def test_a_discovery_document_of_another_issuer_is_refused(settings: Any) -> None:
    provider = OidcProvider.start()
    try:
        # The same provider reached by another name: its document names 127.0.0.1.
        settings.KANBAN_OIDC_ISSUER = provider.issuer.replace("127.0.0.1", "localhost")
        with pytest.raises(KanbanError, match="names another issuer"):
            oidc_provider()
    finally:
        provider.stop()


class Chatty(BaseHTTPRequestHandler):
    """A provider that answers 300 KB with no Content-Length, or what is not JSON."""

    protocol_version = "HTTP/1.0"  # the body ends when the connection does

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        if self.path == "/large":
            self.wfile.write(b'{"name": "' + b"x" * 300 * 1024 + b'"}')
        else:
            self.wfile.write(b"<html>not json</html>")

    def log_message(self, *args: Any) -> None:
        pass


def test_an_answer_too_large_without_saying_so_or_not_json_is_refused() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Chatty)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    at = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with pytest.raises(KanbanError) as large:
            oidc_fetch(f"{at}/large", what="claims (userinfo)")
        assert large.value.code == ErrorCode.TOO_LARGE
        assert "claims (userinfo) is over 256 KB" in large.value.message
        with pytest.raises(KanbanError, match="is not a JSON object"):
            oidc_fetch(f"{at}/page", what="key set").json(what="key set")
    finally:
        server.shutdown()
        server.server_close()


# The ID token ----------------------------------------------------------------------------

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PROVIDER = Provider(ISSUER, f"{ISSUER}/auth", f"{ISSUER}/token", f"{ISSUER}/me", f"{ISSUER}/jwks")


@pytest.fixture
def keys(settings: Any) -> None:
    """The provider's key set, as if just read from its jwks_uri."""
    settings.KANBAN_OIDC_ISSUER = ISSUER
    settings.KANBAN_OIDC_CLIENT_ID = CLIENT_ID
    now = time.monotonic()
    oidc._kept[ISSUER] = oidc._Kept(PROVIDER, now, {"k1": KEY.public_key()}, now)


def id_token(**changes: Any) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "sub": "dave", "aud": CLIENT_ID, "iat": now, "exp": now + 300}
    claims["nonce"] = "n1"
    claims.update(changes)
    return jwt.encode(claims, KEY, algorithm="RS256", headers={"kid": "k1"})


@pytest.mark.usefixtures("keys")
def test_an_id_token_for_this_sign_in_is_believed() -> None:
    claims = oidc_id_token_claims(provider=PROVIDER, token=id_token(), nonce="n1")
    assert claims["sub"] == "dave"


@pytest.mark.usefixtures("keys")
@pytest.mark.parametrize(
    ("token", "says"),
    [
        (lambda: id_token(aud="another-app"), "meant for another application"),
        (lambda: id_token(aud=[CLIENT_ID, "x"], azp="x"), "meant for another application"),
        (lambda: id_token(iss="https://evil.example.com"), "comes from another issuer"),
        (lambda: id_token(exp=int(time.time()) - 120), "has expired"),
        (lambda: id_token(nonce="n2"), "made for another sign-in"),
        (lambda: id_token(nonce=None), "made for another sign-in"),
        (
            lambda: jwt.encode(
                {"sub": "dave"}, "a shared secret of 32 bytes long", algorithm="HS256"
            ),
            "not RS256",
        ),
        (lambda: id_token()[:-8] + "AAAAAAAA", "not valid"),
        (lambda: "not a token", "not a JWT"),
    ],
)
def test_a_wrong_id_token_is_refused_saying_why(token: Any, says: str) -> None:
    with pytest.raises(KanbanError) as refused:
        oidc_id_token_claims(provider=PROVIDER, token=token(), nonce="n1")
    assert refused.value.code == ErrorCode.UNAUTHENTICATED
    assert says in refused.value.message


# The account -----------------------------------------------------------------------------

in_the_database = pytest.mark.django_db


def dave(**changes: Any) -> dict[str, Any]:
    return {"sub": "s-dave", "preferred_username": "dave", "email": "dave@example.com", **changes}


@in_the_database
def test_the_first_sign_in_makes_the_account_and_the_next_finds_it_by_subject() -> None:
    made = oidc_account(issuer=ISSUER, claims=dave(given_name="Dave"))
    assert (made.username, made.email, made.first_name) == ("dave", "dave@example.com", "Dave")
    assert not made.has_usable_password()
    renamed = oidc_account(issuer=ISSUER, claims=dave(preferred_username="david"))
    assert renamed.pk == made.pk, "the subject, not the name, is the person"
    other_provider = dave(preferred_username="dave2")
    assert oidc_account(issuer="https://other.example.com", claims=other_provider).pk != made.pk


@in_the_database
def test_a_look_alike_or_missing_name_is_refused_and_nothing_is_made() -> None:
    with pytest.raises(KanbanError) as lookalike:
        oidc_account(issuer=ISSUER, claims=dave(preferred_username="d\u0430ve"))
    assert lookalike.value.code == ErrorCode.INVALID_ARGUMENT
    assert "cannot be used here: a username is 1 to 150 of the ASCII" in lookalike.value.message
    with pytest.raises(KanbanError, match="sent no preferred_username"):
        oidc_account(issuer=ISSUER, claims={"sub": "s-x"})
    assert not get_user_model().objects.exists()


@in_the_database
def test_a_name_taken_here_is_refused_not_handed_over() -> None:
    alice = a_user("alice", password="alice password 1")
    with pytest.raises(KanbanError) as taken:
        oidc_account(issuer=ISSUER, claims=dave(sub="s-mallory", preferred_username="ALICE"))
    assert taken.value.code == ErrorCode.CONFLICT
    assert "@ALICE already exists here" in taken.value.message
    assert list(get_user_model().objects.all()) == [alice]


@in_the_database
def test_the_staff_group_makes_and_unmakes_staff_but_not_superusers(settings: Any) -> None:
    settings.KANBAN_OIDC_STAFF_GROUP = "kanban-admins"
    erin = oidc_account(issuer=ISSUER, claims=dave(groups=["kanban-admins", "x"]))
    assert erin.is_staff
    assert not oidc_account(issuer=ISSUER, claims=dave(groups=["x"])).is_staff
    assert not oidc_account(issuer=ISSUER, claims=dave(groups="kanban-admins")).is_staff

    root = a_user("root", superuser=True)
    oidc.engine.commit(
        [
            oidc.set_value(
                oidc.oidc_subject(oidc._digest(ISSUER, "s-root")),
                {"user": root.pk, "joined": root.date_joined.isoformat()},
            )
        ]
    )
    assert oidc_account(issuer=ISSUER, claims={"sub": "s-root"}).is_staff


@in_the_database
def test_a_turned_off_account_is_refused() -> None:
    made = oidc_account(issuer=ISSUER, claims=dave())
    get_user_model().objects.filter(pk=made.pk).update(is_active=False)
    with pytest.raises(KanbanError) as off:
        oidc_account(issuer=ISSUER, claims=dave())
    assert off.value.code == ErrorCode.FORBIDDEN


@in_the_database
def test_a_single_sign_on_session_ends_when_its_account_is_turned_off(
    settings: Any, client: Client
) -> None:
    settings.AUTHENTICATION_BACKENDS = [*settings.AUTHENTICATION_BACKENDS, BACKEND]
    made = oidc_account(issuer=ISSUER, claims=dave())
    client.force_login(made, backend=BACKEND)
    assert client.get("/").status_code == 200
    get_user_model().objects.filter(pk=made.pk).update(is_active=False)
    assert client.get("/").url.startswith("/accounts/login/")  # type: ignore[attr-defined]
