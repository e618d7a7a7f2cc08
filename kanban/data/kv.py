"""KV and PersistentValue as a user sees them: every call goes through the one access
function, then the storage service, and records who wrote, through what, from where.

Related projects are reached by the consumer's alias only; a caller never names the target
project. Related access covers project-scope KV only: no list, no delete, no conversation
scope, no PersistentValue (Knowledge has its own grant and module).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal
from uuid import UUID

from kanban.access.decision import Access, Op, aaccess_project_data, access_project_data
from kanban.access.memberships import access_project_role
from kanban.access.project_writes import project_writing
from kanban.data.actions import action_in, needed
from kanban.data.board.comments import (
    PreviousCheck,
    board_delete_check,
    board_write_check,
    check_comments_history,
)
from kanban.data.board.layout import CARD_PREFIX
from kanban.data.target import Target
from kanban.models import Role
from kanban.quotas.deployment import check_write_bytes
from storage import jsoncodec, kv
from storage.addresses import check_text
from storage.errors import Conflict, ErrorCode, KanbanError, invalid_argument
from storage.history import DEFAULT_HISTORY_LIMIT, MAX_HISTORY_LIMIT
from storage.knowledge_format import RESERVED_PREFIX
from storage.limits import MAX_BATCH_BYTES
from storage.namespaces import Domain, check_user_keys
from storage.usage import text_bytes
from storage.writes import ANY

Via = Literal["bridge", "api", "mcp", "admin", "cli"]
MAX_RUN_ID_LENGTH: Final = 256


@dataclass(frozen=True, slots=True)
class Provenance:
    """Through what a write arrived; becomes part of its last write source. An agent's write
    (REST or MCP) may name the run and the conversation it belongs to, and a token's names
    the token (its public prefix) and, over MCP, the agent by the token's name ("triage-bot"),
    so a write shows as the agent's on its owner's behalf."""

    via: Via
    page: str | None = None
    run_id: str | None = None
    conversation_id: str | None = None
    token: str | None = None
    agent: str | None = None
    #: The kept version a write brings back (a card's restore), as the admin's restore names it.
    restored_from: str | None = None


def check_run_id(raw: object, *, field: str) -> str | None:
    """A run or conversation id an agent names (absent: None)."""
    if raw is None:
        return None
    return check_text(raw, field=field, allow_empty=False, max_length=MAX_RUN_ID_LENGTH)


def _dataset(access: Access, target: Target) -> kv.Dataset:
    domain, conversation_id = target.domain, target.conversation_id
    if access.alias is not None and (domain != "kv" or conversation_id is not None):
        raise invalid_argument("related projects offer project-scope KV only")
    return kv.Dataset(access.target_id, domain, conversation_id)


def _access(target: Target, op: Op, key: str | None) -> Access:
    return access_project_data(
        user=target.user, consumer_id=target.project_id, alias=target.alias, op=op, key=key
    )


def check_raw_write(domain: Domain, conversation_id: str | None, key: str) -> None:
    """The Knowledge base owns its keys in the project's PersistentValue: a raw write there
    could corrupt its index, so only ``kanban.data.knowledge`` writes them."""
    if domain == "persistentValue" and conversation_id is None:
        _check_unowned(
            key, RESERVED_PREFIX, holds="are reserved for the Knowledge base", owner="knowledge"
        )


def _check_unowned(key: str, prefix: str, *, holds: str, owner: str) -> None:
    """Keys under ``prefix`` belong to the ``owner`` service, which alone writes them."""
    if key.startswith(prefix):
        raise invalid_argument(
            f"keys starting with {prefix!r} {holds}; use the {owner} operations", field="key"
        )


def write_source(
    *, user: Any, access: Access, provenance: Provenance, conversation_id: str | None
) -> dict[str, Any]:
    source: dict[str, Any] = {
        "user": user.get_username(),
        "userId": user.pk,
        "via": provenance.via,
        "consumerProject": str(access.consumer_id),
    }
    optional = {
        "alias": access.alias,
        "page": provenance.page,
        "runId": provenance.run_id,
        "conversationId": conversation_id or provenance.conversation_id,
        "token": provenance.token,
        "agent": provenance.agent,
        "restoredFrom": provenance.restored_from,
    }
    source.update({name: item for name, item in optional.items() if item is not None})
    return source


#: A card's attachments (``kanban.data.attachments``): their sizes free quota when deleted
#: and their ids name files, so only that service writes these keys.
ATTACHMENTS_PREFIX: Final = "attachments:"


def check_attachments_write(domain: Domain, conversation_id: str | None, key: str) -> None:
    if domain == "kv" and conversation_id is None:
        _check_unowned(
            key, ATTACHMENTS_PREFIX, holds="hold a card's attachments", owner="attachments"
        )


def _raw_write(
    access: Access, target: Target, key: str, provenance: Provenance
) -> tuple[kv.Dataset, dict[str, Any]]:
    """What every raw KV write (set, compare-and-set, delete) settles once it is allowed:
    the dataset, the Knowledge base's and the attachments' keys refused, and the source the write
    records. One place, so that no write path skips a step."""
    dataset = _dataset(access, target)
    check_raw_write(dataset.domain, dataset.conversation_id, key)
    check_attachments_write(dataset.domain, dataset.conversation_id, key)
    source = write_source(
        user=target.user,
        access=access,
        provenance=provenance,
        conversation_id=dataset.conversation_id,
    )
    return dataset, source


def project_kv_get(*, target: Target, key: str) -> kv.Entry | None:
    return kv.kv_get(dataset=_dataset(_access(target, Op.GET, key), target), key=key)


def project_kv_get_many(*, target: Target, keys: object) -> list[kv.Entry | KanbanError | None]:
    """Named keys in one round trip, in the order asked. Each key is decided by the same
    read rule as ``project_kv_get``: a key the grant does not open is refused alone
    (``forbidden``), the others are read. Values past ``MAX_BATCH_BYTES`` in all come back
    as ``too_large``, to be read one by one."""
    if target.conversation_id is not None:
        raise invalid_argument("a batched read reads project-scope values", field="keys")
    checked = check_user_keys(keys)
    access = _access(target, Op.GET, None)
    allowed = [key for key in checked if access.read.allows(key)]
    found = kv.kv_get_many(dataset=_dataset(access, target), keys=allowed)
    return _batch(checked, dict(zip(allowed, found, strict=True)), target.alias)


def _batch(
    checked: list[str], entries: dict[str, kv.Entry | None], alias: str | None
) -> list[kv.Entry | KanbanError | None]:
    """A batched read's answer per key asked, from the entries of the keys it could read."""
    results: list[kv.Entry | KanbanError | None] = []
    budget = MAX_BATCH_BYTES
    for key in checked:
        if key not in entries:
            results.append(
                KanbanError(
                    ErrorCode.FORBIDDEN, f"reading {key!r} through {alias!r} is not allowed"
                )
            )
            continue
        entry = entries[key]
        size = 0 if entry is None else len(jsoncodec.encode_stored(entry.value))
        if size > budget:
            results.append(
                KanbanError(
                    ErrorCode.TOO_LARGE,
                    f"{key!r} is past this read's {MAX_BATCH_BYTES} bytes; read it alone",
                )
            )
            continue
        budget -= size
        results.append(entry)
    return results


async def aproject_kv_get(*, target: Target, key: str) -> Any:
    """``project_kv_get`` of ``target``'s dataset on the event loop (``storage.aio``)."""
    access = await _aaccess(target, key)
    return await kv.akv_get(dataset=_dataset(access, target), key=key)


async def aproject_kv_get_many(
    *, target: Target, keys: object
) -> list[kv.Entry | KanbanError | None]:
    """``project_kv_get_many`` of ``target``'s dataset on the event loop."""
    checked = check_user_keys(keys)
    access = await _aaccess(target, None)
    allowed = [key for key in checked if access.read.allows(key)]
    found = await kv.akv_get_many(dataset=_dataset(access, target), keys=allowed)
    return _batch(checked, dict(zip(allowed, found, strict=True)), target.alias)


async def _aaccess(target: Target, key: str | None) -> Access:
    return await aaccess_project_data(
        user=target.user, consumer_id=target.project_id, alias=target.alias, op=Op.GET, key=key
    )


#: What a read carries of an agent's write source: who, through what, and which agent, run
#: or conversation. The token, the page and the projects stay in the key's history: a
#: 5,000-card board an agent wrote loads 0.3 MB more with these, not 0.75 MB.
READ_SOURCE_FIELDS: Final = ("user", "via", "agent", "runId", "conversationId")


def agent_source(source: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What a read carries of ``source`` when it is an agent's write: one that names its
    agent, came through MCP, or names a run or a conversation (the Board's ``agentOf``,
    board-history.js); None for a person's."""
    if not source:
        return None
    named = isinstance(source.get("agent"), str) and source["agent"].strip()
    if named or source.get("via") == "mcp" or source.get("runId") or source.get("conversationId"):
        return {name: source[name] for name in READ_SOURCE_FIELDS if name in source}
    return None


def read_result(item: kv.Entry | KanbanError | None) -> dict[str, Any]:
    """One key of a read as every transport renders it. The last write's source comes along
    only when it was an agent's: a page can mark what an agent changed without reading
    history, and a read of people's values costs no byte more."""
    if isinstance(item, KanbanError):
        return {"found": False, "error": item.as_dict()}
    if item is None:
        return {"found": False}
    found = {"found": True, "value": item.value, "revision": item.revision}
    source = agent_source(item.source)
    return found if source is None else {**found, "source": source}


def project_kv_set(
    *,
    target: Target,
    key: str,
    value: Any,
    provenance: Provenance,
    expected_revision: str | object | None = ANY,
) -> str:
    """Write; with ``expected_revision`` (None = must be absent) as compare-and-set.

    A mismatch raises ``conflict`` carrying the current entry when the caller may read it.
    A compare-and-set is decided as an update, which needs the read grant as well as the
    write grant: its success or conflict tells whether the key holds that revision.
    """
    access = _access(target, Op.SET if expected_revision is ANY else Op.UPDATE, key)
    dataset, source = _raw_write(access, target, key, provenance)
    check_write_bytes(user=target.user, size=text_bytes(jsoncodec.encode(value)))
    check = board_write_check(user=target.user, dataset=dataset, key=key, value=value)
    try:
        with project_writing(project_id=access.target_id):
            if check is not None:
                revision = _checked_set(dataset, key, value, source, expected_revision, check)
            else:
                revision = kv.kv_set(
                    dataset=dataset,
                    key=key,
                    value=value,
                    source=source,
                    expected_revision=expected_revision,
                )
            if isinstance(value, dict) and value.get("deleted"):
                _card_gone(dataset, key, source)
            return revision
    except Conflict as exc:
        raise _conflict_with_current(access, dataset, key, exc) from None


def _checked_set(
    dataset: kv.Dataset,
    key: str,
    value: Any,
    source: dict[str, Any],
    expected_revision: str | object | None,
    check: PreviousCheck,
) -> str:
    """A set that the value it replaces must allow (a Board's comments): checked against the
    current entry and written over that entry only, as a compare-and-set on its revision.
    Without an expected revision, a write that came in between is read and checked again."""
    expected = expected_revision
    if expected is not ANY and expected is not None:
        expected = kv.revision_of(kv.parse_revision(expected))
    for _ in range(kv.MAX_UPDATE_ATTEMPTS):
        current = kv.kv_get(dataset=dataset, key=key)
        revision = None if current is None else current.revision
        if expected is not ANY and expected != revision:
            wanted = "absent" if expected is None else f"revision {expected}"
            raise Conflict(
                f"{key!r} is not {wanted}; nothing was written",
                current_seq=None if revision is None else kv.parse_revision(revision),
            )
        check(None if current is None else current.value)
        try:
            return kv.kv_set(
                dataset=dataset, key=key, value=value, source=source, expected_revision=revision
            )
        except Conflict:
            if expected is not ANY:
                raise
    raise _gave_up(key)


def _conflict_with_current(
    access: Access, dataset: kv.Dataset, key: str, exc: Conflict
) -> KanbanError:
    if not access.read.allows(key):
        # A write-only grant must not turn conflicts into a read channel.
        return KanbanError(ErrorCode.CONFLICT, exc.message)
    entry = kv.kv_get(dataset=dataset, key=key)
    current: dict[str, Any] = {"found": entry is not None}
    if entry is not None:
        current.update(value=entry.value, revision=entry.revision)
    return KanbanError(ErrorCode.CONFLICT, exc.message, current=current)


def project_kv_delete(*, target: Target, key: str, provenance: Provenance) -> bool:
    if target.alias is not None:
        raise invalid_argument("related projects offer no delete", field="alias")
    access = _access(target, Op.SET, key)
    dataset, source = _raw_write(access, target, key, provenance)
    check = board_delete_check(user=target.user, dataset=dataset, key=key)
    with project_writing(project_id=access.target_id):
        deleted = _checked_delete(dataset, key, source, check)
        _card_gone(dataset, key, source)
        return deleted


def _card_gone(dataset: kv.Dataset, key: str, source: dict[str, Any]) -> None:
    """In the transaction that deletes a Board card (its key deleted, or set to the
    Board's tombstone ``{id, deleted: true}``, as the Board deletes one for good): its
    attachments go with it. Every way in (bridge, REST, MCP) writes through here; an
    archived card is not deleted and keeps them."""
    if dataset.domain != "kv" or dataset.conversation_id is not None:
        return
    if not key.startswith(CARD_PREFIX):
        return
    # attachments imports this module (its write sources): imported when first needed.
    from kanban.data.attachments import attachments_drop_with_card

    attachments_drop_with_card(dataset=dataset, card=key.removeprefix(CARD_PREFIX), source=source)


def _checked_delete(
    dataset: kv.Dataset, key: str, source: dict[str, Any], check: PreviousCheck | None
) -> bool:
    if check is None:
        return kv.kv_delete(dataset=dataset, key=key, source=source)
    for _ in range(kv.MAX_UPDATE_ATTEMPTS):
        current = kv.kv_get(dataset=dataset, key=key)
        if current is None:
            return False
        check(current.value)
        try:
            return kv.kv_delete(
                dataset=dataset, key=key, source=source, expected_revision=current.revision
            )
        except Conflict:
            continue
    raise _gave_up(key)


def _gave_up(key: str) -> KanbanError:
    return KanbanError(
        ErrorCode.CONFLICT, f"gave up after {kv.MAX_UPDATE_ATTEMPTS} conflicting writes of {key!r}"
    )


def project_kv_history(
    *, target: Target, key: str, before: object = None, limit: object = None
) -> dict[str, Any]:
    """A key's kept versions, newest first, under the key's own read rule (never wider):
    ``{entries: [{revision, value, deleted?, source, writtenAt}], cursor}``; pass
    ``cursor`` back as ``before`` for the older ones (null: there are none)."""
    access = _access(target, Op.GET, key)
    if before is not None and not isinstance(before, str):
        raise invalid_argument("before is a revision this server issued", field="before")
    if limit is not None and (type(limit) is not int or not 0 < limit <= MAX_HISTORY_LIMIT):
        raise invalid_argument(f"limit is 1 to {MAX_HISTORY_LIMIT}", field="limit")
    size = limit or DEFAULT_HISTORY_LIMIT
    dataset = _dataset(access, target)
    check_comments_history(user=target.user, dataset=dataset, key=key)
    versions = kv.kv_history(dataset=dataset, key=key, before=before, limit=size)
    entries = []
    for version in versions:
        entry: dict[str, Any] = {"revision": kv.revision_of(version.seq)}
        if version.deleted:
            entry["deleted"] = True
        else:
            entry["value"] = version.value
        entry.update(source=version.source, writtenAt=version.written_at.isoformat())
        entries.append(entry)
    cursor = entries[-1]["revision"] if len(entries) == size else None
    return {"entries": entries, "cursor": cursor}


def project_kv_history_purge(
    *,
    user: Any,
    project_id: UUID,
    key: str,
    domain: Domain = "kv",
    conversation_id: str | None = None,
) -> dict[str, Any]:
    """The owner deletes every kept version of one key, a deleted key's too (its current
    value stays): the bytes they held leave the project's usage at once instead of when
    they age out. ``{purged}``: how many versions went."""
    access_project_role(
        user=user, project_id=project_id, needed=Role.OWNER, doing="purging kept versions"
    )
    dataset = kv.Dataset(project_id, domain, conversation_id)
    check_raw_write(domain, conversation_id, key)
    return {"purged": kv.kv_history_purge(dataset=dataset, key=key)}


# --- one call, as the transports name it ---------------------------------------------------


def kv_action(
    *, action: str, target: Target, arguments: Mapping[str, Any], provenance: Provenance
) -> Any:
    """One KV call on ``target`` with its ``arguments`` (the SDK's field names: ``key``,
    ``keys``, ``value``, ``expectedRevision``), answered as JSON. The bridge, REST and MCP
    all call this and keep only their own mapping of arguments and errors:

    - ``get``: ``{found, value?, revision?}``; ``entry``: the stored entry with its write
      source and time (``not_found`` when absent);
    - ``getMany``: one ``get`` answer per named key, in order, a refused key as
      ``{found: false, error}``;
    - ``set``: ``{revision}``; with ``expectedRevision`` (null = must be absent) a
      compare-and-set whose ``conflict`` carries the current entry when readable;
    - ``delete``: ``{deleted}`` (the project's own datasets only);
    - ``history``: the key's kept versions (``project_kv_history``), by ``limit`` and
      ``before``.
    """
    run = action_in(_ACTIONS, action, of="kv")
    return run(_KvCall(action, target, arguments), provenance)


@dataclass(frozen=True, slots=True)
class _KvCall:
    action: str
    target: Target
    arguments: Mapping[str, Any]

    def needs(self, name: str) -> Any:
        return needed(self.arguments, name, action=self.action)

    @property
    def key(self) -> Any:
        return needed(self.arguments, "key", action=self.action, allow_null=False)


def _read(call: _KvCall) -> kv.Entry | None:
    return project_kv_get(target=call.target, key=call.key)


def _get(call: _KvCall, provenance: Provenance) -> Any:
    return read_result(_read(call))


def _entry(call: _KvCall, provenance: Provenance) -> Any:
    entry = _read(call)
    if entry is None:
        raise KanbanError(ErrorCode.NOT_FOUND, "no value is stored under this key")
    return render_entry(entry)


def render_entry(entry: kv.Entry) -> dict[str, Any]:
    return {
        "key": entry.key,
        "value": entry.value,
        "revision": entry.revision,
        "updatedAt": entry.updated_at.isoformat(),
        "source": entry.source,
    }


def _get_many(call: _KvCall, provenance: Provenance) -> Any:
    items = project_kv_get_many(target=call.target, keys=call.needs("keys"))
    return [read_result(item) for item in items]


def _set(call: _KvCall, provenance: Provenance) -> Any:
    revision = project_kv_set(
        target=call.target,
        key=call.key,
        value=call.needs("value"),
        expected_revision=call.arguments.get("expectedRevision", ANY),
        provenance=provenance,
    )
    return {"revision": revision}


def _delete(call: _KvCall, provenance: Provenance) -> Any:
    return {"deleted": project_kv_delete(target=call.target, key=call.key, provenance=provenance)}


def _history(call: _KvCall, provenance: Provenance) -> Any:
    return project_kv_history(
        target=call.target,
        key=call.key,
        before=call.arguments.get("before"),
        limit=call.arguments.get("limit"),
    )


async def kv_read_action(
    *,
    action: str,
    target: Target,
    arguments: Mapping[str, Any],
    provenance: Provenance | None = None,
) -> Any:
    """``kv_action`` for ``get`` and ``getMany`` of the KV dataset, called and answered
    the same way (a read records no provenance), on the event loop: the bridge's hot path
    on PostgreSQL (``storage.aio``)."""
    call = _KvCall(action, target, arguments)
    if target.domain != "kv" or target.conversation_id is not None:
        raise invalid_argument("reads on the event loop read project-scope KV", field="action")
    if action == "get":
        return read_result(await aproject_kv_get(target=target, key=call.key))
    if action == "getMany":
        items = await aproject_kv_get_many(target=target, keys=call.needs("keys"))
        return [read_result(item) for item in items]
    raise invalid_argument(f"{action!r} is not read on the event loop", field="action")


_ACTIONS: Final[dict[str, Callable[[_KvCall, Provenance], Any]]] = {
    "get": _get,
    "entry": _entry,
    "getMany": _get_many,
    "set": _set,
    "delete": _delete,
    "history": _history,
}
#: The actions that write: a read-only token may call only the others.
WRITE_ACTIONS: Final = frozenset({"set", "delete"})
