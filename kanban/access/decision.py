"""Who may touch which project's data: THE access decision every transport calls.

A request names only the consumer project (from the page or URL), an alias (None for the
consumer project itself) and a key. The target is what the consumer's declaration for that
alias names; the access is what the target's declaration for the consumer grants back. A
one-sided declaration grants nothing, and nothing reaches a third project: the target's
own declarations are never followed.

Every call re-reads memberships and declarations in one query, so a removal or narrowing
applies to the very next call.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, TypedDict, Unpack
from uuid import UUID

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import connections, router

from kanban.access.grant_rules import ALL, GRANT_COLUMNS, Rule, grant_from_columns
from kanban.access.relationships import ALIAS_RE
from kanban.models import ROLE_RANK, Membership, Project, Relationship, Role
from storage import aio
from storage.engine import driver_cursor
from storage.errors import ErrorCode, KanbanError, invalid_argument

__all__ = ["Access", "Op", "Rule", "aaccess_project_data", "access_project_data"]


class Op(StrEnum):
    GET = "get"
    SET = "set"
    UPDATE = "update"
    SUBSCRIBE = "subscribe"
    KNOWLEDGE_READ = "knowledge.read"
    KNOWLEDGE_WRITE = "knowledge.write"
    ENTRYPOINTS = "entrypoints"


#: The grant rules each operation must pass on a related project.
_RULES: Final[dict[Op, tuple[str, ...]]] = {
    Op.GET: ("read",),
    # A subscription hears KV writes under ``read`` and document writes under
    # ``knowledge_read``: either one opening something is enough (see ``_ANY_RULE``).
    Op.SUBSCRIBE: ("read", "knowledge_read"),
    Op.SET: ("write",),
    Op.UPDATE: ("read", "write"),
    Op.KNOWLEDGE_READ: ("knowledge_read",),
    Op.KNOWLEDGE_WRITE: ("knowledge_write",),
    Op.ENTRYPOINTS: ("entrypoints",),
}
_WRITES: Final = frozenset({Op.SET, Op.UPDATE, Op.KNOWLEDGE_WRITE})
#: Operations allowed when any one of their rules allows; the others need every rule.
_ANY_RULE: Final = frozenset({Op.SUBSCRIBE})
_GERUND: Final[dict[Op, str]] = {
    Op.GET: "reading",
    Op.SUBSCRIBE: "subscribing",
    Op.SET: "writing",
    Op.UPDATE: "updating",
    Op.KNOWLEDGE_READ: "reading knowledge",
    Op.KNOWLEDGE_WRITE: "writing knowledge",
    Op.ENTRYPOINTS: "using entrypoints",
}


@dataclass(frozen=True, slots=True)
class Access:
    """An allowed access: the consumer, the target (the consumer itself when ``alias`` is
    None) and the rules the target grants the consumer (all ``all`` for the consumer's own
    project). Callers that touch several keys check each with these rules."""

    consumer_id: UUID
    target_id: UUID
    alias: str | None
    read: Rule
    write: Rule
    knowledge_read: Rule
    knowledge_write: Rule
    entrypoints: Rule = ALL


class AccessRequest(TypedDict):
    """What the decision is asked, by keyword, on either side of the event loop: may
    ``user``, working in project ``consumer_id``, perform ``op`` on ``key`` of the project
    behind ``alias`` (None: the consumer project itself)? ``key`` None (e.g. subscribe)
    asks only whether the rule opens anything at all."""

    user: AbstractBaseUser | AnonymousUser | None
    consumer_id: UUID
    alias: str | None
    op: Op
    key: str | None


def access_project_data(**request: Unpack[AccessRequest]) -> Access:
    """Decide an ``AccessRequest``.

    Raises ``KanbanError``: ``unauthenticated``, ``not_found`` (consumer project unknown or
    the user is not a member; the two are indistinguishable), ``unknown_alias``,
    ``relationship_pending``, ``forbidden``.
    """
    op, consumer_uuid = _check_request(**request)
    user, alias, key = request["user"], request["alias"], request["key"]
    row = None if consumer_uuid is None else _fetch(_params(user, consumer_uuid, alias))
    return _decide(user, consumer_uuid, alias, op, key, row)


async def aaccess_project_data(**request: Unpack[AccessRequest]) -> Access:
    """``access_project_data`` on the event loop (``storage.aio.reads_on_loop``): the same
    statement fetched asynchronously, the same verdict."""
    op, consumer_uuid = _check_request(**request)
    user, alias, key = request["user"], request["alias"], request["key"]
    row = None
    if consumer_uuid is not None:
        raw = await aio.fetchone(_access_sql("postgresql"), _params(user, consumer_uuid, alias))
        row = None if raw is None else _row_of(raw)
    return _decide(user, consumer_uuid, alias, op, key, row)


def _check_request(
    user: AbstractBaseUser | AnonymousUser | None,
    consumer_id: object,
    alias: object,
    op: Op | str,
    key: object,
) -> tuple[Op, UUID | None]:
    """The request's own shape, before any read; the project id as a UUID (None: not one)."""
    if user is None or not user.is_authenticated or not user.is_active:
        raise KanbanError(ErrorCode.UNAUTHENTICATED, "sign in to access project data")
    try:
        checked = Op(op)
    except ValueError:
        raise invalid_argument(f"unknown operation {op!r}", field="op") from None
    if alias is not None and not isinstance(alias, str):
        raise invalid_argument("alias must be a string", field="alias")
    if alias is not None and not ALIAS_RE.fullmatch(alias):
        # No project can declare it (a NUL in it would not even reach the lookup).
        raise KanbanError(
            ErrorCode.UNKNOWN_ALIAS, f"this project declares no relationship {alias!r}", alias=alias
        )
    if key is not None and not isinstance(key, str):
        raise invalid_argument("key must be a string", field="key")
    return checked, _as_uuid(consumer_id)


def _decide(
    user: Any,
    consumer_uuid: UUID | None,
    alias: str | None,
    op: Op,
    key: str | None,
    row: _Row | None,
) -> Access:
    """The verdict on one fetched row: the one place the rules are applied, whichever way
    the row was fetched."""
    needed = Role.DEVELOPER if op in _WRITES else Role.GUEST
    # The user as the database has them now, not as whoever holds ``user`` loaded them (an
    # open websocket, since its handshake): deactivated, or a new password, ends access
    # at once, with no event needed; a revoked superuser is no longer one.
    if row is not None and (not row.active or row.password != user.password):
        raise KanbanError(ErrorCode.UNAUTHENTICATED, "the account changed: sign in again")
    superuser = row is not None and row.superuser
    if row is None or (not superuser and row.role is None):
        raise KanbanError(ErrorCode.NOT_FOUND, "no such project")
    assert consumer_uuid is not None
    consumer_role = Role.OWNER if superuser else str(row.role)

    if alias is None:
        if ROLE_RANK[consumer_role] < ROLE_RANK[needed]:
            raise KanbanError(
                ErrorCode.FORBIDDEN, f"{_GERUND[op]} in this project needs the {needed} role"
            )
        return Access(consumer_uuid, consumer_uuid, None, ALL, ALL, ALL, ALL)

    target_id = row.target
    if target_id is None:
        raise KanbanError(
            ErrorCode.UNKNOWN_ALIAS, f"this project declares no relationship {alias!r}", alias=alias
        )
    back = row.back
    if back is None:
        raise KanbanError(
            ErrorCode.RELATIONSHIP_PENDING,
            f"relationship {alias!r} is pending until the related project declares this one",
            alias=alias,
        )
    if ROLE_RANK[consumer_role] < ROLE_RANK[needed]:
        raise KanbanError(
            ErrorCode.FORBIDDEN,
            f"{_GERUND[op]} through {alias!r} needs the {needed} role in this project",
            alias=alias,
        )
    target_role = Role.OWNER if superuser else row.target_role
    grant = grant_from_columns(back)
    rules = [getattr(grant, name) for name in _RULES[op]]
    combine = any if op in _ANY_RULE else all
    allowed = (
        target_role is not None
        and ROLE_RANK[target_role] >= ROLE_RANK[needed]
        and combine((not rule.is_none) if key is None else rule.allows(key) for rule in rules)
    )
    if not allowed:
        # One message for every reason on the target's side (no membership there, too low a
        # role, a grant that does not cover the key): the consumer learns nothing about the
        # target beyond what its own declaration says.
        what = _GERUND[op] if key is None else f"{_GERUND[op]} {key!r}"
        raise KanbanError(
            ErrorCode.FORBIDDEN, f"{what} through {alias!r} is not allowed", alias=alias
        )
    return Access(
        consumer_id=consumer_uuid,
        target_id=target_id,
        alias=alias,
        read=grant.read,
        write=grant.write,
        knowledge_read=grant.knowledge_read,
        knowledge_write=grant.knowledge_write,
        entrypoints=grant.entrypoints,
    )


def _as_uuid(value: object) -> UUID | None:
    if isinstance(value, UUID):
        return value
    try:
        return UUID(str(value))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class _Row:
    role: str | None
    target: UUID | None
    #: The target's declaration pointing back at the consumer, None when it has none.
    back: dict[str, Any] | None
    target_role: str | None
    active: bool
    superuser: bool
    password: str


@functools.cache
def _access_sql(vendor: str) -> str:
    """The one statement behind every access decision, built from the models' own table and
    column names. Raw SQL because this runs on every bridge call and the ORM's query
    compilation cost several times the query itself (see bench B2)."""

    def table(model: Any) -> str:
        return str(model._meta.db_table)

    def col(model: Any, field: str) -> str:
        return str(model._meta.get_field(field).column)

    project, membership, relationship = table(Project), table(Membership), table(Relationship)
    pk = col(Project, "id")
    m_user, m_project, m_role = (col(Membership, f) for f in ("user", "project", "role"))
    r_project, r_alias, r_target = (
        col(Relationship, f) for f in ("project", "alias", "related_project_id")
    )
    grant = ", ".join(f"b.{col(Relationship, name)}" for name in GRANT_COLUMNS)
    User = get_user_model()
    users = table(User)
    account = ", ".join(f"u.{col(User, f)}" for f in ("is_active", "is_superuser", "password"))
    sql = (
        f"SELECT m.{m_role}, r.{r_target}, b.{col(Relationship, 'id')}, {grant}, t.{m_role},"
        f" {account}"
        f" FROM {project} p"
        f" JOIN {users} u ON u.{col(User, 'id')} = %s"
        f" LEFT JOIN {membership} m ON m.{m_project} = p.{pk} AND m.{m_user} = %s"
        f" LEFT JOIN {relationship} r ON r.{r_project} = p.{pk} AND r.{r_alias} = %s"
        f" LEFT JOIN {relationship} b"
        f" ON b.{r_project} = r.{r_target} AND b.{r_target} = p.{pk}"
        f" LEFT JOIN {membership} t ON t.{m_project} = b.{r_project} AND t.{m_user} = %s"
        f" WHERE p.{pk} = %s"
    )
    return sql.replace("%s", "?") if vendor == "sqlite" else sql


def _params(user: Any, consumer_id: UUID, alias: str | None) -> tuple[Any, ...]:
    using = router.db_for_read(Project)
    project_pk = Project._meta.pk
    assert project_pk is not None
    consumer = project_pk.get_db_prep_value(consumer_id, connections[using])
    return (user.pk, user.pk, alias, user.pk, consumer)


def _fetch(params: tuple[Any, ...]) -> _Row | None:
    """One round trip: the consumer project (None if unknown), the user's role there, the
    alias' target, the target's declaration back and the user's role in the target."""
    using = router.db_for_read(Project)
    # The driver's cursor: on PostgreSQL it binds on the server and psycopg prepares the
    # statement after a few calls per connection.
    with driver_cursor(using) as (_, cursor):
        cursor.execute(_access_sql(connections[using].vendor), params)
        row = cursor.fetchone()
    return None if row is None else _row_of(row)


def _row_of(row: tuple[Any, ...]) -> _Row:
    role, target, back_id, *grant, target_role, active, superuser, password = row
    back = None
    if back_id is not None:
        back = {
            name: (
                json.loads(value)
                if isinstance(value, str) and name.endswith("_prefixes")
                else value
            )
            for name, value in zip(GRANT_COLUMNS, grant, strict=True)
        }
    return _Row(
        role=role,
        target=_as_uuid(target) if target is not None else None,
        back=back,
        target_role=target_role,
        active=bool(active),
        superuser=bool(superuser),
        password=password,
    )
