"""The one module where raw namespace strings live, with the constructors that own each
key grammar. Everything else receives already-bound addresses from here."""

from __future__ import annotations

from typing import Final, Literal
from uuid import UUID

from storage import limits
from storage.addresses import MAX_NAMESPACE_LENGTH, Value, check_text
from storage.errors import invalid_argument

Domain = Literal["kv", "persistentValue"]
DOMAINS: Final[tuple[Domain, ...]] = ("kv", "persistentValue")

#: KV keys are at most this long; the address limit is higher for internal keys.
MAX_USER_KEY_LENGTH: Final = limits.MAX_KEY_CHARS
_PREFIX: Final = "project"
#: A conversation id is the last part of its dataset's namespace, so it is as long as the
#: namespace limit leaves room for after the longest base (a 256-character limit here once
#: promised ids the namespace then refused).
MAX_CONVERSATION_ID_LENGTH: Final = MAX_NAMESPACE_LENGTH - len(
    f"{_PREFIX}.{UUID(int=0)}.{max(DOMAINS, key=len)}.conversation."
)


def check_user_key(key: object) -> str:
    """The one validation of a user-supplied KV / PersistentValue key."""
    return check_text(key, field="key", allow_empty=False, max_length=MAX_USER_KEY_LENGTH)


def check_user_keys(keys: object) -> list[str]:
    """The one validation of the keys a batched read names: 1 to ``MAX_BATCH_KEYS`` of them,
    each a valid key."""
    if not isinstance(keys, list) or not keys:
        raise invalid_argument("keys must be a non-empty list of keys", field="keys")
    if len(keys) > limits.MAX_BATCH_KEYS:
        raise invalid_argument(f"at most {limits.MAX_BATCH_KEYS} keys per read", field="keys")
    return [check_user_key(key) for key in keys]


def check_conversation_id(conversation_id: object) -> str:
    return check_text(
        conversation_id,
        field="conversationId",
        allow_empty=False,
        max_length=MAX_CONVERSATION_ID_LENGTH,
    )


def _domain(domain: str) -> Domain:
    if domain not in DOMAINS:
        raise invalid_argument(f"unknown storage domain {domain!r}", field="domain")
    return domain  # type: ignore[return-value]


#: What every project's namespaces start with.
PROJECTS_ROOT: Final = f"{_PREFIX}."


def project_root(project_id: UUID) -> str:
    """What every namespace of one project's datasets starts with."""
    return f"{_PREFIX}.{project_id}."


def dataset_namespace(project_id: UUID, domain: str, conversation_id: str | None = None) -> str:
    """``project.<uuid>.<domain>`` or ``project.<uuid>.<domain>.conversation.<id>``.

    The conversation id is the last component, so no id can reach another dataset.
    """
    base = f"{_PREFIX}.{project_id}.{_domain(domain)}"
    if conversation_id is None:
        return base
    return f"{base}.conversation.{check_conversation_id(conversation_id)}"


def dataset_value(
    project_id: UUID, domain: str, key: str, conversation_id: str | None = None
) -> Value:
    return Value(dataset_namespace(project_id, domain, conversation_id), check_user_key(key))


def dataset_prefix(
    project_id: UUID, domain: str, prefix: str = "", conversation_id: str | None = None
) -> Value:
    """A prefix address for bounded scans of one dataset (the KV viewer)."""
    return Value(dataset_namespace(project_id, domain, conversation_id), prefix)


def project_kv(project_id: UUID, key: str) -> Value:
    return dataset_value(project_id, "kv", key)


def parse_namespace(namespace: str) -> tuple[UUID, Domain, str | None] | None:
    """Map a namespace back to (project, domain, conversation id), or None if not a dataset."""
    parts = namespace.split(".", 3)
    if len(parts) < 3 or parts[0] != _PREFIX or parts[2] not in DOMAINS:
        return None
    try:
        project_id = UUID(parts[1])
    except ValueError:
        return None
    if len(parts) == 3:
        return project_id, parts[2], None  # type: ignore[return-value]
    rest = parts[3]
    if not rest.startswith("conversation."):
        return None
    return project_id, parts[2], rest[len("conversation.") :]  # type: ignore[return-value]


FAILED_SIGN_INS: Final = "kanban.login.failures"


def failed_sign_ins(subject: str) -> Value:
    """Sign-in attempts counted for one subject (a hashed username, an address, or both):
    ``{"count", "since"}``."""
    return Value(FAILED_SIGN_INS, subject)


INVITE_SIGN_UPS: Final = "kanban.invites.sign_ups"


def invite_sign_ups(subject: str) -> Value:
    """Accounts made through invite links in the current day for one subject (an inviter
    or an address): ``{"count", "since"}``."""
    return Value(INVITE_SIGN_UPS, subject)


OIDC_SUBJECTS: Final = "kanban.oidc.subjects"


def oidc_subject(subject: str) -> Value:
    """The account an OpenID provider's person signs in as (their issuer and subject,
    hashed together): ``{"user", "joined"}``."""
    return Value(OIDC_SUBJECTS, subject)


def known_sign_in_address(subject: str) -> Value:
    """That an address has signed in as an account (hashed together): ``{"at"}``."""
    return Value("kanban.login.known", subject)


def demo_marker() -> Value:
    """Set once the development demo data has been loaded (the dashboard says so)."""
    return Value("kanban.demo", "seeded")


def trello_import_marker(trello_board_id: str) -> Value:
    """Which project an import of one Trello board made: ``{"projectId"}``, so importing
    the same export again updates that board instead of making another."""
    return Value("kanban.imports.trello", trello_board_id)


def board_archive_marker(archived_board_id: str) -> Value:
    """Which project an import of one board archive made: ``{"projectId"}``, keyed by the
    exported board's id, so importing an archive of the same board again updates it."""
    return Value("kanban.imports.board_archive", archived_board_id)
