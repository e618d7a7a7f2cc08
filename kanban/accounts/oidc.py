"""Single sign-on with OpenID Connect: the provider, its answers, and whose account a sign-in is.

mozilla-django-oidc runs the authorization code flow (state, nonce and PKCE in the session,
the code exchanged at the token endpoint; ``oidc_backend``). It was kept over django-allauth
because it does that and nothing else: allauth is a whole accounts app (its own sign-up,
email and password pages, a dozen models) beside the ones this product has. What the library
leaves to its users is here, one rule each:

- the provider's endpoints and keys come from its discovery document
  (``/.well-known/openid-configuration``), read at the first sign-in and kept an hour
  (``oidc_provider``), the keys likewise and read again for a key id not seen (rotation);
- every answer is read with a size limit (``MAX_ANSWER_BYTES``): a provider that sends a
  10 MB claim is refused, not parsed;
- an ID token is checked whole (``oidc_id_token_claims``): signature, issuer, audience,
  expiry and nonce (the library checks no audience and no issuer);
- a person is known by their issuer and subject, never by an email or a name a provider lets
  people choose (``oidc_account``): the first sign-in makes their account, its username
  taken from a claim under the rule sign-up uses (``check_username``), and refused when that
  name is taken rather than handed someone else's account.

Each refusal is a ``KanbanError`` whose message the sign-in page shows; nothing is written.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Final

import jwt
import requests
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from kanban.accounts.users import check_username, user_create
from storage import engine
from storage.errors import ErrorCode, KanbanError, invalid_argument
from storage.namespaces import OIDC_SUBJECTS, oidc_subject
from storage.writes import set_value

#: How long the discovery document and the keys are believed.
DISCOVERY_SECONDS: Final = 3600
#: The most any answer of the provider may be: discovery, keys, tokens, the person's claims.
MAX_ANSWER_BYTES: Final = 256 * 1024
#: Clocks differ a little between here and the provider.
LEEWAY_SECONDS: Final = 30
#: A key id not among the kept keys reads the keys again, at most this often.
KEYS_REREAD_SECONDS: Final = 60
#: A provider that did not answer is not asked again for this long: sign-ins meanwhile are
#: refused at once instead of each holding a worker thread for the timeout.
DOWN_SECONDS: Final = 5

#: What a refused sign-in says after what went wrong.
START_AGAIN: Final = "Nobody was signed in; start again from the sign-in page."


@dataclass(frozen=True, slots=True)
class Provider:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str
    jwks_uri: str


@dataclass(slots=True)
class _Kept:
    provider: Provider
    read_at: float
    keys: dict[str, Any]
    keys_read_at: float


_kept: dict[str, _Kept] = {}
_down: dict[str, tuple[float, KanbanError]] = {}
_lock = threading.Lock()


def refused(message: str, code: ErrorCode = ErrorCode.UNAUTHENTICATED) -> KanbanError:
    return KanbanError(code, f"{message} {START_AGAIN}")


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytes
    content_type: str

    def json(self, *, what: str) -> dict[str, Any]:
        try:
            parsed = json.loads(self.body)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            raise refused(f"The sign-in provider's {what} is not a JSON object.")
        return parsed


def oidc_fetch(url: str, *, what: str, **options: Any) -> Answer:
    """One request to the provider, its answer read up to ``MAX_ANSWER_BYTES``: past that,
    ``too_large``; no answer (refused, timed out), ``unavailable``. Never follows a
    redirect: every endpoint is named by discovery."""
    method = "POST" if "data" in options else "GET"
    try:
        with requests.request(
            method,
            url,
            timeout=float(settings.KANBAN_OIDC_TIMEOUT),
            stream=True,
            allow_redirects=False,
            **options,
        ) as response:
            declared = response.headers.get("Content-Length", "")
            body = bytearray()
            too_large = declared.isdigit() and int(declared) > MAX_ANSWER_BYTES
            if not too_large:  # refused unread when it says so; else read up to one byte more
                for chunk in response.iter_content(64 * 1024):
                    body += chunk
                    if len(body) > MAX_ANSWER_BYTES:
                        break
            if too_large or len(body) > MAX_ANSWER_BYTES:
                raise refused(
                    f"The sign-in provider's {what} is over {MAX_ANSWER_BYTES // 1024} KB.",
                    ErrorCode.TOO_LARGE,
                )
            return Answer(
                response.status_code, bytes(body), response.headers.get("Content-Type", "")
            )
    except requests.RequestException as error:
        raise refused(
            f"The sign-in provider does not answer ({what}: {type(error).__name__}); "
            "if it stays down, ask an administrator.",
            ErrorCode.UNAVAILABLE,
        ) from None


def _endpoint(document: dict[str, Any], name: str) -> str:
    value = document.get(name)
    if not isinstance(value, str) or not value.startswith(("https://", "http://")):
        raise refused(f"The sign-in provider's discovery document has no {name}.")
    return value


def oidc_provider() -> Provider:
    """The configured provider's endpoints, from its discovery document (kept an hour)."""
    issuer = str(settings.KANBAN_OIDC_ISSUER)
    if not issuer:
        raise KanbanError(ErrorCode.NOT_SUPPORTED, "This server has no single sign-on.")
    now = time.monotonic()
    with _lock:
        kept = _kept.get(issuer)
        if kept is not None and now - kept.read_at < DISCOVERY_SECONDS:
            return kept.provider
        down = _down.get(issuer)
        if down is not None and now < down[0]:
            raise down[1]
    try:
        answer = oidc_fetch(f"{issuer}/.well-known/openid-configuration", what="discovery document")
    except KanbanError as error:
        if error.code == ErrorCode.UNAVAILABLE:
            with _lock:
                _down[issuer] = (now + DOWN_SECONDS, error)
        raise
    document = answer.json(what="discovery document")
    # A document naming another issuer is another provider's (OpenID Connect Discovery 4.3).
    if str(document.get("issuer", "")).rstrip("/") != issuer:
        raise refused(f"The discovery document at {issuer} names another issuer.")
    provider = Provider(
        issuer=str(document["issuer"]),
        authorization_endpoint=_endpoint(document, "authorization_endpoint"),
        token_endpoint=_endpoint(document, "token_endpoint"),
        userinfo_endpoint=_endpoint(document, "userinfo_endpoint"),
        jwks_uri=_endpoint(document, "jwks_uri"),
    )
    with _lock:
        _kept[issuer] = _Kept(provider, now, {}, 0.0)
    return provider


def oidc_forget() -> None:
    """Forgets every provider's document and keys (a test's new provider)."""
    with _lock:
        _kept.clear()
        _down.clear()


def oidc_signing_key(*, provider: Provider, kid: str) -> Any:
    """The provider's public key ``kid``, from its key set (kept with the document)."""
    issuer = str(settings.KANBAN_OIDC_ISSUER)
    with _lock:
        kept = _kept.get(issuer)
        if kept is not None and kid in kept.keys:
            return kept.keys[kid]
        if kept is not None and time.monotonic() - kept.keys_read_at < KEYS_REREAD_SECONDS:
            raise refused("The identity token is signed with a key the provider does not list.")
    found = oidc_fetch(provider.jwks_uri, what="key set").json(what="key set")
    keys: dict[str, Any] = {}
    for jwk in found.get("keys") or []:
        if not isinstance(jwk, dict) or jwk.get("use", "sig") != "sig":
            continue
        try:
            keys[str(jwk.get("kid", ""))] = jwt.PyJWK(jwk).key
        except jwt.PyJWTError:
            continue  # a key of a kind this server does not verify with
    with _lock:
        if issuer in _kept:
            _kept[issuer].keys, _kept[issuer].keys_read_at = keys, time.monotonic()
    if kid not in keys:
        raise refused("The identity token is signed with a key the provider does not list.")
    return keys[kid]


def oidc_id_token_claims(*, provider: Provider, token: object, nonce: str | None) -> dict[str, Any]:
    """The claims of an ID token this sign-in asked for, or ``unauthenticated`` saying why
    not: signed by the provider with the configured algorithm, issued by it, for this
    client, not expired, carrying this sign-in's nonce."""
    if not isinstance(token, str) or not token:
        raise refused("The sign-in provider sent no identity token.")
    algorithm = str(settings.KANBAN_OIDC_SIGN_ALGO)
    client_id = str(settings.KANBAN_OIDC_CLIENT_ID)
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise refused("The identity token is not a JWT.") from None
    if header.get("alg") != algorithm:
        raise refused(f"The identity token is signed with {header.get('alg')!r}, not {algorithm}.")
    key = oidc_signing_key(provider=provider, kid=str(header.get("kid", "")))
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=[algorithm],
            audience=client_id,
            issuer=provider.issuer,
            leeway=LEEWAY_SECONDS,
            options={"require": ["iss", "sub", "aud", "exp", "iat"]},
        )
    except jwt.ExpiredSignatureError:
        raise refused("The identity token has expired.") from None
    except jwt.InvalidAudienceError:
        raise refused("The identity token is meant for another application.") from None
    except jwt.InvalidIssuerError:
        raise refused("The identity token comes from another issuer.") from None
    except jwt.PyJWTError as error:
        raise refused(f"The identity token is not valid ({error}).") from None
    audience = claims["aud"]
    if isinstance(audience, list) and len(audience) > 1 and claims.get("azp") != client_id:
        raise refused("The identity token is meant for another application.")
    if nonce is None or claims.get("nonce") != nonce:
        raise refused("The identity token was made for another sign-in (its nonce).")
    return claims


def _digest(issuer: str, subject: str) -> str:
    return hashlib.sha256(f"{issuer}\n{subject}".encode()).hexdigest()


def _text(claims: dict[str, Any], name: str, *, limit: int) -> str:
    value = claims.get(name)
    return value if isinstance(value, str) and len(value) <= limit else ""


def oidc_account(*, issuer: str, claims: dict[str, Any]) -> User:
    """The account of the person the provider vouches for (``sub``): theirs when they have
    signed in before, else a new one named by the username claim (sign-up's rule; a name
    taken here is refused, never joined). With ``KANBAN_OIDC_STAFF_GROUP`` set, the groups
    claim decides at each sign-in whether they are staff (superusers keep theirs)."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not 0 < len(subject) <= 255:
        raise refused("The sign-in provider named nobody (no subject).")
    link = oidc_subject(_digest(issuer, subject))
    with transaction.atomic():
        engine.lock_namespace(OIDC_SUBJECTS)  # one person's two first sign-ins make one account
        stored = engine.get_value(link)
        user: User | None = None
        if stored is not None:
            user = User.objects.filter(
                pk=stored.value["user"], date_joined=stored.value["joined"]
            ).first()
        if user is None:
            user = _first_sign_in(claims)
            joined = user.date_joined.isoformat()
            engine.commit([set_value(link, {"user": user.pk, "joined": joined})])
        if not user.is_active:
            raise KanbanError(ErrorCode.FORBIDDEN, "This account is turned off here.")
        staff_group = str(settings.KANBAN_OIDC_STAFF_GROUP)
        if staff_group and not user.is_superuser:
            groups = claims.get(str(settings.KANBAN_OIDC_GROUPS_CLAIM))
            member = isinstance(groups, list) and staff_group in groups
            if user.is_staff != member:
                user.is_staff = member
                user.save(update_fields=["is_staff"])
    return user


def _first_sign_in(claims: dict[str, Any]) -> User:
    claim = str(settings.KANBAN_OIDC_USERNAME_CLAIM)
    username = claims.get(claim)
    if not isinstance(username, str) or not username:
        raise refused(
            f"The sign-in provider sent no {claim}, which names a new account here.",
            ErrorCode.INVALID_ARGUMENT,
        )
    try:
        check_username(username)
    except KanbanError as error:
        raise invalid_argument(
            f"The sign-in provider's username {username[:160]!r} cannot be used here: "
            f"{error.message}. Ask an administrator. {START_AGAIN}",
            field="username",
        ) from None
    try:
        created = user_create(username=username, password=None)
    except KanbanError as error:
        if error.code != ErrorCode.CONFLICT:
            raise
        raise KanbanError(
            ErrorCode.CONFLICT,
            f"An account @{username} already exists here and is not this sign-in's. "
            "Ask an administrator.",
            field="username",
        ) from None
    user = User.objects.get(pk=created.pk)
    email = _text(claims, "email", limit=254)
    try:
        validate_email(email)
    except ValidationError:
        email = ""
    user.email = email
    user.first_name = _text(claims, "given_name", limit=150)
    user.last_name = _text(claims, "family_name", limit=150)
    user.save(update_fields=["email", "first_name", "last_name"])
    return user
