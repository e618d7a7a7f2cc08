"""Import a board archive (``kanban.imports.board_export`` writes one) as a Board the actor
owns, here or on another deployment: the same columns, cards, comments (their original
authors and dates), checklists, labels, plugin values, knowledge documents and Board page.

The archive is checked whole first (``board_archive_format``), then the board is written in
one storage commit inside the transaction that creates the project, so a refused import
leaves nothing behind. The importer is a trusted writer, like the Trello importer: it keeps
what each value says (comment authors and dates included) and its writes say
``"via": "import"``.

Importing an archive of the same board again finds the board the first import made (by the
archived board's id, ``storage.namespaces.board_archive_marker``) and updates it: every value
the archive holds comes back to the archive's, the package and plugin files too; values,
cards and columns added here since stay. Members are never added: those with a username
here are offered the board (they accept or decline in their inbox), the others are named in
the report.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID, uuid4

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from kanban.access.memberships import check_role, membership_set
from kanban.data.board import layout
from kanban.data.members import member_set
from kanban.imports.board_archive_files import (
    attachment_files_undo,
    attachment_files_write,
    attachments_incoming,
    is_attachments_key,
)
from kanban.imports.board_archive_format import DOMAINS, FORMAT, archive_read
from kanban.imports.earlier_import import board_of_earlier_import
from kanban.imports.quota import check_import_size
from kanban.imports.report import ImportReport
from kanban.models import Membership, Project, Role
from kanban.projects.attachment_files import attachment_files_delete
from kanban.projects.board_templates import check_board_quota
from kanban.projects.lifecycle import check_project_name, check_project_type, project_create
from kanban.projects.plugin_files import PluginSource, content_type_for, plugin_files_replace
from storage import engine
from storage.errors import Conflict, ErrorCode, KanbanError, invalid_argument
from storage.namespaces import board_archive_marker, dataset_value, project_root
from storage.writes import ANY, ExpectedSeq, Write, delete_value, set_value

#: Values read back per round trip when a board is imported again.
READ_CHUNK: Final = 500


def archive_bytes_limit() -> int:
    """The largest archive accepted (and what its parts may unpack to): the Trello
    import's limit, ``KANBAN_TRELLO_IMPORT_BYTES``."""
    return int(settings.KANBAN_TRELLO_IMPORT_BYTES)


@dataclass(frozen=True)
class ArchiveReport(ImportReport):
    """A board archive's import, and the people it offered the board to or did not find."""

    offered: list[str] = field(default_factory=list)
    not_here: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            **super().as_dict(),
            "offered": list(self.offered),
            "notHere": list(self.not_here),
        }


@dataclass(frozen=True)
class _Board:
    id: str
    name: str
    type: str
    entry: str
    package: dict[str, Any]
    members: list[tuple[str, Role]]
    values: dict[str, dict[str, Any]]
    #: Each value's kept versions before its current one, oldest first (``--history``).
    history: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)


def board_archive_import(*, actor: Any, data: bytes, dry_run: bool = False) -> ArchiveReport:
    """Import the board archive ``data`` as a Board ``actor`` owns (or update the one an
    earlier import of it made, when ``actor`` owns it). Refuses bad input
    (``invalid_argument``, ``too_large``) writing nothing."""
    limit = archive_bytes_limit()
    if len(data) > limit:
        raise KanbanError(
            ErrorCode.TOO_LARGE, f"a board archive may be at most {limit} bytes", limit=limit
        )
    archive = archive_read(data, max_bytes=limit)
    board = _check_board(archive.board, version=archive.version)
    files = tuple(
        PluginSource(path, content, content_type_for(path), hashlib.sha256(content).hexdigest())
        for path, content in sorted(archive.files.items())
    )
    marker = engine.get_value(board_archive_marker(board.id))
    project = board_of_earlier_import(actor=actor, marker=marker, what="board")
    project_id = uuid4() if project is None else project.id
    current = {} if project is None else _read(project_id, board)
    attachment_values = {k: v for k, v in board.values["kv"].items() if is_attachments_key(k)}
    incoming = attachments_incoming(
        project_id=project_id,
        values=attachment_values,
        parts=archive.attachments,
        current={key: current.get(("kv", key)) for key in attachment_values},
    )
    board = dataclasses.replace(
        board, values={**board.values, "kv": {**board.values["kv"], **incoming.values}}
    )
    source = {
        "user": actor.get_username(),
        "userId": actor.pk,
        "via": "import",
        "import": "board-archive",
        "archivedBoard": board.id,
    }
    # Kept versions come back only into a board the import makes: one it updates has its
    # own history since.
    writes = _writes(project_id, board, current=current, source=source, replay=project is None)
    check_import_size(writes, file_bytes=incoming.added, counted="as stored")
    counts = {**_counts(board, files), "attachments": incoming.count}
    offered, not_here = _people(board, actor=actor, project=project)
    if not dry_run:
        written: list[str] = []
        try:
            with transaction.atomic():
                target = _project(
                    actor=actor, project=project, project_id=project_id, board=board, files=files
                )
                marker_write = set_value(
                    board_archive_marker(board.id),
                    {"projectId": str(target.id)},
                    expected_seq=None if marker is None else marker.seq,
                )
                attachment_files_write(incoming.files, written)
                try:
                    engine.commit(
                        [*writes, marker_write],
                        max_project_bytes=int(settings.KANBAN_PROJECT_BYTES),
                        file_bytes={project_root(target.id): incoming.file_bytes},
                    )
                except Conflict:
                    raise KanbanError(
                        ErrorCode.CONFLICT,
                        "this board was imported meanwhile, or changed while this import ran: "
                        "nothing was written; import it again",
                    ) from None
                for username, role in board.members:
                    if username in offered:
                        member_set(actor=actor, project_id=target.id, username=username, role=role)
                # The files of the attachments it replaced, once they are no longer named.
                transaction.on_commit(
                    functools.partial(attachment_files_delete, paths=incoming.replaced)
                )
        except BaseException:
            attachment_files_undo(written)
            raise
    return ArchiveReport(
        project_id=None if dry_run and project is None else project_id,
        board_name=board.name,
        dry_run=dry_run,
        created=project is None,
        counts=counts,
        offered=offered,
        not_here=not_here,
    )


def _check_board(raw: dict[str, Any], *, version: int) -> _Board:
    """board.json's fields, each checked: a missing or wrong one refuses the archive. A
    version 1 archive's ``attachments:<card>`` values name files it does not carry: they
    stay behind."""
    if raw.get("format") != FORMAT or raw.get("version") != version:
        raise invalid_argument(
            f"board.json is not a {FORMAT} of version {version} (its manifest's)",
            field="version",
        )
    board, members, values = raw.get("board"), raw.get("members"), raw.get("values")
    if not isinstance(board, dict) or not isinstance(board.get("package"), dict):
        raise invalid_argument("board.json has no board with its package", field="board")
    try:
        board_id = str(UUID(str(board.get("id"))))
    except ValueError:
        raise invalid_argument("board.json: board.id is not a UUID", field="board.id") from None
    entry = board.get("kanbanEntry")
    if not isinstance(entry, str) or not entry:
        raise invalid_argument("board.json: board.kanbanEntry is missing", field="board")
    if not isinstance(members, list) or not all(
        isinstance(member, dict) and isinstance(member.get("username"), str) for member in members
    ):
        raise invalid_argument("board.json: members is a list of {username, role}", field="members")
    checked_members = []
    for member in members:
        role = check_role(member.get("role"))
        if role is None:
            raise invalid_argument("board.json: each member has a role", field="members")
        checked_members.append((member["username"], role))
    if not isinstance(values, dict) or set(values) != set(DOMAINS):
        raise invalid_argument(f"board.json: values holds {' and '.join(DOMAINS)}", field="values")
    checked: dict[str, dict[str, Any]] = {}
    history: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for domain in DOMAINS:
        entries = values[domain]
        if not isinstance(entries, list) or not all(
            isinstance(entry, dict) and "key" in entry and "value" in entry for entry in entries
        ):
            raise invalid_argument(
                f"board.json: values.{domain} is a list of {{key, value}}", field="values"
            )
        checked[domain] = {}
        for item in entries:
            # The key rule of every KV write (and a key listed twice is a damaged archive).
            dataset_value(UUID(int=0), domain, item["key"])
            if item["key"] in checked[domain]:
                raise invalid_argument(f"board.json: {domain} {item['key']!r} is listed twice")
            if domain == "kv" and version == 1 and is_attachments_key(item["key"]):
                continue
            checked[domain][item["key"]] = item["value"]
            if not is_attachments_key(item["key"]):  # their ids name files no longer there
                history[(domain, item["key"])] = _check_history(item.get("history"), item["key"])
    return _Board(
        id=board_id,
        name=check_project_name(board.get("name")),
        type=check_project_type(board.get("type")),
        entry=entry,
        package=board["package"],
        members=checked_members,
        values=checked,
        history={name: versions for name, versions in history.items() if versions},
    )


def _check_history(raw: object, key: str) -> list[dict[str, Any]]:
    """A value's kept versions as the export lists them (newest first, the current value
    among them), checked: the older ones, oldest first."""
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(
        isinstance(version, dict)
        and isinstance(version.get("deleted"), bool)
        and (version["deleted"] or "value" in version)
        and isinstance(version.get("source") or {}, dict)
        for version in raw
    ):
        raise invalid_argument(
            f"board.json: {key}'s history is a list of {{value, deleted, source, writtenAt}}",
            field="values",
        )
    return list(reversed(raw[1:]))


def _read(project_id: UUID, board: _Board) -> dict[tuple[str, str], engine.StoredValue | None]:
    """What the board holds now under every key the import writes."""
    found: dict[tuple[str, str], engine.StoredValue | None] = {}
    for domain in DOMAINS:
        keys = list(board.values[domain])
        if domain == "kv":
            keys += [k for k in (layout.COLUMNS_KEY, layout.INDEX_KEY) if k not in keys]
        # A batched read takes one namespace at a time.
        for start in range(0, len(keys), READ_CHUNK):
            chunk = keys[start : start + READ_CHUNK]
            addresses = [dataset_value(project_id, domain, key) for key in chunk]
            stored = engine.get_values(addresses)
            found.update(((domain, key), item) for key, item in zip(chunk, stored, strict=True))
    return found


def _merged(key: str, value: Any, current: dict[tuple[str, str], engine.StoredValue | None]) -> Any:
    """The Board's index and columns as the archive has them, then what was added here."""
    stored = current.get(("kv", key))
    if stored is None:
        return value
    if key == layout.INDEX_KEY and isinstance(value, list):
        return value + [card for card in layout.normalize_index(stored.value) if card not in value]
    if key == layout.COLUMNS_KEY and isinstance(value, list):
        ids = {column.get("id") for column in value if isinstance(column, dict)}
        here = layout.normalize_columns(stored.value)
        return value + [column for column in here if column["id"] not in ids]
    return value


def _writes(
    project_id: UUID,
    board: _Board,
    *,
    current: dict[tuple[str, str], engine.StoredValue | None],
    source: dict[str, Any],
    replay: bool = False,
) -> list[Write]:
    """The import's writes: each value the archive holds; with ``replay``, a value the board
    does not hold yet is preceded by its kept versions, so its Activity shows the edits
    made before it was exported (who made them, and when, in each version's source)."""
    keep, limit = int(settings.KANBAN_HISTORY_REVISIONS), int(settings.KANBAN_MAX_VALUE_BYTES)
    writes: list[Write] = []
    for domain in DOMAINS:
        for key, value in board.values[domain].items():
            stored = current.get((domain, key))
            expected: ExpectedSeq = None if stored is None else stored.seq
            merged = _merged(key, value, current) if domain == "kv" else value
            if replay and stored is None:
                older = _replayed(
                    dataset_value(project_id, domain, key),
                    board.history.get((domain, key), []),
                    source=source,
                    keep=keep,
                )
                if older:
                    writes += older
                    expected = ANY
            try:
                writes.append(
                    set_value(
                        dataset_value(project_id, domain, key),
                        merged,
                        expected_seq=expected,
                        source=source,
                        max_bytes=limit,
                        keep=keep,
                    )
                )
            except KanbanError as error:
                raise KanbanError(error.code, f"{key}: {error.message}", **error.details) from None
    return writes


def _replayed(
    address: Any, versions: list[dict[str, Any]], *, source: dict[str, Any], keep: int
) -> list[Write]:
    """Writes that keep ``versions`` (oldest first) as the key's history, each under its
    original source with the date it was written; the first one creates the key."""
    writes: list[Write] = []
    for version in versions[-(keep - 1) :] if keep > 1 else []:
        replayed = {
            **(version.get("source") or {}),
            "replayedBy": source,
            "writtenAt": version.get("writtenAt"),
        }
        if version["deleted"]:
            if writes:  # a deletion before anything was written is nothing to keep
                writes.append(delete_value(address, source=replayed, keep=keep))
            continue
        writes.append(
            set_value(
                address,
                version["value"],
                expected_seq=None if not writes else ANY,
                source=replayed,
                keep=keep,
            )
        )
    return writes


def _counts(board: _Board, files: tuple[PluginSource, ...]) -> dict[str, int]:
    kv = board.values["kv"]
    cards = [k for k, v in kv.items() if k.startswith(layout.CARD_PREFIX) and isinstance(v, dict)]
    comments = sum(
        len(value)
        for key, value in kv.items()
        if key.startswith("comments:") and isinstance(value, list)
    )
    return {
        "values": len(kv),
        "persistent values": len(board.values["persistentValue"]),
        "columns": len(layout.normalize_columns(kv.get(layout.COLUMNS_KEY))),
        "cards": len(cards),
        "comments": comments,
        "plugin files": len(files),
        "members": len(board.members),
    }


def _people(board: _Board, *, actor: Any, project: Project | None) -> tuple[list[str], list[str]]:
    """The archive's members to offer the board (users here, not on it yet) and those
    with no account here."""
    names = [username for username, _ in board.members]
    here = {
        user.get_username(): user
        for user in get_user_model().objects.filter(username__in=names, is_active=True)
    }
    on_board = set()
    if project is not None:
        on_board = set(
            Membership.objects.filter(project=project).values_list("user__username", flat=True)
        )
    offered = [
        name
        for name in names
        if name in here and name != actor.get_username() and name not in on_board
    ]
    return offered, [name for name in names if name not in here]


def _project(
    *,
    actor: Any,
    project: Project | None,
    project_id: UUID,
    board: _Board,
    files: tuple[PluginSource, ...],
) -> Project:
    """The board's project, made or brought to the archive's package and plugin files."""
    if project is None:
        check_board_quota(user=actor)
        project = project_create(
            name=board.name, type=board.type, project_id=project_id, kanban_entry=board.entry
        )
        membership_set(user=actor, project=project, role=Role.OWNER)
    package = json.loads(json.dumps(board.package))
    info = package.setdefault("steamHarness", {}).setdefault("projectInfo", {})
    # Relationships name projects of the deployment the archive came from.
    info.update(projectId=str(project.id), name=board.name, relatedProjects=[])
    project.name, project.type, project.kanban_entry = board.name, board.type, board.entry
    project.package_json = json.dumps(package, indent=2, ensure_ascii=False) + "\n"
    project.save(update_fields=["name", "type", "kanban_entry", "package_json", "updated_at"])
    plugin_files_replace(project=project, files=files)
    return project
