"""The project Knowledge base as a user sees it: every call asks the one access function,
then calls the storage service, recording who wrote, through what, from where.

Access is decided per key (seed 000, "Generic relationships"). A call naming one document
is decided by that document's id, so a prefix grant (``"prefixes": ["kb_"]``) opens the
documents whose ids start with it. A call naming none (listing, searching every document,
creating under an id the server picks) works on the index all documents share,
``knowledge.documents``, and needs the whole rule: under a prefix grant it is refused with
that key named, whatever the prefixes are. Reads check ``knowledge.read``, writes
``knowledge.write``; a KV grant alone opens nothing here. Roles follow KV: guest on both
projects to read, developer to write.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

from django.conf import settings

from kanban.access.decision import Access, Op, access_project_data
from kanban.access.project_writes import project_writing
from kanban.data.actions import action_in, needed
from kanban.data.kv import Provenance, write_source
from kanban.data.target import Target
from kanban.quotas import deployment as quotas
from storage import knowledge
from storage.errors import ErrorCode, KanbanError, invalid_argument
from storage.knowledge import INDEX_KEY
from storage.usage import text_bytes
from storage.writes import ANY


def access_knowledge(*, target: Target, op: Op, document_id: str | None) -> Access:
    """Fetch-and-authorize for one Knowledge call: by the document's id when it names one
    (knowledge prefixes are document-id prefixes), else as the shared index, under a rule
    that must be ``all``."""
    alias = target.alias
    access = access_project_data(
        user=target.user, consumer_id=target.project_id, alias=alias, op=op, key=document_id
    )
    rule = access.knowledge_read if op is Op.KNOWLEDGE_READ else access.knowledge_write
    if document_id is None and rule.mode != "all":
        key = INDEX_KEY
        raise KanbanError(
            ErrorCode.FORBIDDEN,
            f"{key!r} is shared by every document, and a prefix grant through {alias!r} "
            "opens named documents only; listing, searching and creating without an id "
            "need the whole knowledge grant",
            alias=alias,
            key=key,
        )
    return access


def _read(target: Target, document_id: str | None) -> UUID:
    """Authorize a read; the project to read from."""
    access = access_knowledge(target=target, op=Op.KNOWLEDGE_READ, document_id=document_id)
    return access.target_id


def _write(
    target: Target, document_id: str | None, provenance: Provenance
) -> tuple[Access, dict[str, Any]]:
    """Authorize a write; its access, and the target project and the write's source as
    storage takes them.

    A write naming a document (create under a chosen id, edit, delete) needs the knowledge
    read grant on it as well: its answer (created or taken, edited or not found, deleted
    or not) tells whether the document exists, as a compare-and-set tells of a KV key. A
    write-only grant is a drop box: it creates documents under ids the server picks."""
    access = access_knowledge(target=target, op=Op.KNOWLEDGE_WRITE, document_id=document_id)
    if document_id is not None and not access.knowledge_read.allows(document_id):
        raise KanbanError(
            ErrorCode.FORBIDDEN,
            f"changing document {document_id!r} through {target.alias!r} needs the knowledge "
            "read grant on it too; a write-only grant only creates documents under new ids",
            alias=target.alias,
        )
    source = write_source(
        user=target.user, access=access, provenance=provenance, conversation_id=None
    )
    return access, {"project_id": access.target_id, "source": source}


@dataclass(frozen=True, slots=True)
class WriteReceipt:
    """What a write returns to a caller who may not read the document: its id and new
    revision, none of its content (the abstract would show the body's first lines)."""

    id: str
    revision: str

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "revision": self.revision}


def _answer(access: Access, summary: knowledge.DocumentSummary) -> Any:
    if access.knowledge_read.allows(summary.abstract.id):
        return summary
    return WriteReceipt(id=summary.abstract.id, revision=summary.revision)


def project_knowledge_list(*, target: Target, cursor: str | None = None) -> knowledge.DocumentPage:
    return knowledge.knowledge_list(project_id=_read(target, None), cursor=cursor)


def project_knowledge_get(*, target: Target, document_id: str) -> knowledge.Document:
    return knowledge.knowledge_get(project_id=_read(target, document_id), document_id=document_id)


def _text_bytes(*texts: object) -> int:
    """What a document write counts against its writer's write-bytes rate (the text it
    stores; anything not text is refused by the storage service)."""
    return sum(text_bytes(text) for text in texts if isinstance(text, str))


def project_knowledge_create(
    *,
    target: Target,
    title: str,
    markdown: str,
    provenance: Provenance,
    document_id: str | None = None,
) -> knowledge.DocumentSummary | WriteReceipt:
    access, writing = _write(target, document_id, provenance)
    quotas.check_write_bytes(user=target.user, size=_text_bytes(title, markdown))
    with project_writing(project_id=access.target_id):
        created = knowledge.knowledge_create(
            title=title, markdown=markdown, document_id=document_id, **writing
        )
    return _answer(access, created)


def project_knowledge_edit(
    *,
    target: Target,
    document_id: str,
    provenance: Provenance,
    title: str | None = None,
    markdown: str | None = None,
    expected_revision: str | object = ANY,
) -> knowledge.DocumentSummary:
    _, writing = _write(target, document_id, provenance)
    quotas.check_write_bytes(user=target.user, size=_text_bytes(title, markdown))
    with project_writing(project_id=writing["project_id"]):
        return knowledge.knowledge_edit(
            document_id=document_id,
            title=title,
            markdown=markdown,
            expected_revision=expected_revision,
            **writing,
        )


def project_knowledge_delete(*, target: Target, document_id: str, provenance: Provenance) -> bool:
    _, writing = _write(target, document_id, provenance)
    with project_writing(project_id=writing["project_id"]):
        return knowledge.knowledge_delete(document_id=document_id, **writing)


def project_knowledge_search(
    *,
    target: Target,
    query: str,
    document_id: str | None = None,
    before_lines: int = 0,
    after_lines: int = 0,
) -> knowledge.SearchResult:
    """Search every document (an index read), or only ``document_id`` (that document's).
    At most ``KANBAN_SEARCHES_PER_USER`` of one person's run at once, in this worker and
    (with Redis) in the whole deployment; more are ``rate_limited`` (each has a budget
    too, ``storage.knowledge.knowledge_search``)."""
    project_id = _read(target, document_id)
    with search_slot(target.user.pk):
        return knowledge.knowledge_search(
            project_id=project_id,
            query=query,
            document_id=document_id,
            before_lines=before_lines,
            after_lines=after_lines,
        )


_searching: dict[int, int] = {}
_searching_lock = threading.Lock()


def _too_many_searches(running: int) -> KanbanError:
    return KanbanError(
        ErrorCode.RATE_LIMITED,
        f"{running} of your searches are running; wait for one to finish",
        retryAfter=1,
    )


@contextmanager
def search_slot(user_id: int) -> Iterator[None]:
    with _searching_lock:
        running = _searching.get(user_id, 0)
        if running >= settings.KANBAN_SEARCHES_PER_USER:
            raise _too_many_searches(running)
        _searching[user_id] = running + 1
    try:
        with quotas.search_slot(user_id=user_id) as held:
            if not held:
                raise _too_many_searches(int(settings.KANBAN_SEARCHES_PER_USER))
            yield
    finally:
        with _searching_lock:
            if _searching[user_id] == 1:
                del _searching[user_id]
            else:
                _searching[user_id] -= 1


def project_knowledge_read_lines(
    *,
    target: Target,
    document_id: str,
    start_line: int,
    end_line: int | None = None,
) -> knowledge.DocumentLines:
    return knowledge.knowledge_read_lines(
        project_id=_read(target, document_id),
        document_id=document_id,
        start_line=start_line,
        end_line=end_line,
    )


# --- one call, as the transports name it ---------------------------------------------------


def knowledge_action(
    *,
    action: str,
    target: Target,
    document_id: str | None,
    arguments: Mapping[str, Any],
    provenance: Provenance,
) -> Any:
    """One of the seven Knowledge calls (``list``, ``get``, ``create``, ``edit``,
    ``delete``, ``search``, ``read_lines``) on ``target`` with its ``arguments`` (the SDK's
    field names; a null is the same as leaving a field out), answered as JSON. The bridge
    and MCP both call this; REST maps its own URLs onto the functions above."""
    run = action_in(_ACTIONS, action, of="knowledge")
    given = {name: item for name, item in arguments.items() if item is not None}
    return run(_Call(action, target, document_id, given), provenance)


@dataclass(frozen=True, slots=True)
class _Call:
    action: str
    target: Target
    document_id: str | None
    arguments: dict[str, Any]

    def needs(self, name: str) -> Any:
        return needed(self.arguments, name, action=self.action)

    def document(self) -> str:
        if self.document_id is None:
            raise invalid_argument(f"{self.action} needs the document id", field="id")
        return self.document_id


def _list(call: _Call, provenance: Provenance) -> Any:
    return project_knowledge_list(
        cursor=call.arguments.get("cursor"),
        target=call.target,
    ).as_dict()


def _get(call: _Call, provenance: Provenance) -> Any:
    return project_knowledge_get(target=call.target, document_id=call.document()).as_dict()


def _create(call: _Call, provenance: Provenance) -> Any:
    return project_knowledge_create(
        title=call.needs("title"),
        markdown=call.needs("markdown"),
        document_id=call.document_id,
        provenance=provenance,
        target=call.target,
    ).as_dict()


def _edit(call: _Call, provenance: Provenance) -> Any:
    return project_knowledge_edit(
        document_id=call.document(),
        title=call.arguments.get("title"),
        markdown=call.arguments.get("markdown"),
        provenance=provenance,
        target=call.target,
    ).as_dict()


def _delete(call: _Call, provenance: Provenance) -> Any:
    deleted = project_knowledge_delete(
        document_id=call.document(),
        provenance=provenance,
        target=call.target,
    )
    return {"deleted": deleted}


def _search(call: _Call, provenance: Provenance) -> Any:
    return project_knowledge_search(
        query=call.needs("query"),
        document_id=call.document_id,
        before_lines=call.arguments.get("beforeLines", 0),
        after_lines=call.arguments.get("afterLines", 0),
        target=call.target,
    ).as_dict()


def _read_lines(call: _Call, provenance: Provenance) -> Any:
    return project_knowledge_read_lines(
        document_id=call.document(),
        start_line=call.needs("start"),
        end_line=call.arguments.get("end"),
        target=call.target,
    ).as_dict()


_ACTIONS: Final[dict[str, Callable[[_Call, Provenance], Any]]] = {
    "list": _list,
    "get": _get,
    "create": _create,
    "edit": _edit,
    "delete": _delete,
    "search": _search,
    "read_lines": _read_lines,
}
