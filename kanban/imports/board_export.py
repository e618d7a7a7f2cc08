"""A board written out: the whole board as a board archive (``board_export``, read back by
``kanban.imports.board_archive``), or its cards as CSV for a spreadsheet
(``board_cards_csv``).

Both need the developer role: a board's data is every member's to read, but a copy that
leaves the server with everything (knowledge documents, the plugin's values) is for the
people who work on it, not its guests.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Final
from uuid import UUID

from django.utils import timezone

from kanban.access.memberships import access_project_role
from kanban.data.board import comments as board_comments
from kanban.data.board import layout
from kanban.imports.board_archive_files import attachment_parts
from kanban.imports.board_archive_format import DOMAINS, FORMAT, VERSION, archive_pack
from kanban.models import Membership, Project, Role
from kanban.projects.exports import package_document
from storage import engine, history
from storage.errors import ErrorCode, KanbanError
from storage.namespaces import dataset_prefix, project_kv

#: Values read per round trip.
SCAN_CHUNK: Final = 1000
#: A spreadsheet runs a cell starting with one of these as a formula.
FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")
CSV_HEADER: Final = (
    "column",
    "title",
    "description",
    "labels",
    "assignees",
    "due",
    "checklist done",
    "checklist total",
    "comments",
    "archived",
)


def access_board_export(*, actor: Any, project_id: UUID) -> Project:
    return access_project_role(
        user=actor, project_id=project_id, needed=Role.DEVELOPER, doing="exporting the board"
    )


def board_export(*, actor: Any, project_id: UUID, history: bool = False) -> bytes:
    """The board archive of the project (``board_archive_of``), for a developer of it."""
    access_board_export(actor=actor, project_id=project_id)
    return board_archive_of(project_id=project_id, history=history, by=actor.get_username())


def board_archive_of(*, project_id: UUID, history: bool = False, by: str = "") -> bytes:
    """The board archive of the project: its package and plugin files, every value of its
    KV and PersistentValue (with their kept versions when ``history``), its members by
    username, its attachments' files and covers. No access check: the caller's (the CLI
    is the server's administrator)."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        raise KanbanError(ErrorCode.NOT_FOUND, f"no project {project_id}")
    files = {f.path: bytes(f.content) for f in project.plugin_files.order_by("path")}
    attachments, attachment_files = attachment_parts(project_id=project.id)
    board = {
        "format": FORMAT,
        "version": VERSION,
        "exportedAt": timezone.now().isoformat(),
        "exportedBy": by,
        "board": {
            "id": str(project.id),
            "name": project.name,
            "type": project.type,
            "kanbanEntry": project.kanban_entry,
            "package": package_document(project),
        },
        "members": [
            {"username": m.user.get_username(), "role": m.role}
            for m in Membership.objects.filter(project=project, user__is_active=True)
            .select_related("user")
            .order_by("user__username")
        ],
        "values": {domain: _values(project.id, domain, history=history) for domain in DOMAINS},
        "history": history,
        "attachments": attachments,
    }
    return archive_pack(board=board, files=files, attachments=attachment_files)


def _values(project_id: UUID, domain: str, *, history: bool) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    prefix = dataset_prefix(project_id, domain)
    after: str | None = None
    while page := engine.scan_values(prefix, start_after=after, limit=SCAN_CHUNK):
        for stored in page:
            entry = {
                "key": stored.address.key,
                "value": stored.value,
                "writtenAt": stored.written_at.isoformat(),
            }
            if history:
                entry["history"] = _history(stored.address)
            found.append(entry)
        after = page[-1].address.key
    return found


def _history(address: Any) -> list[dict[str, Any]]:
    versions: list[dict[str, Any]] = []
    before: int | None = None
    while page := history.read_history(address, before=before, limit=history.MAX_HISTORY_LIMIT):
        versions += [
            {
                "value": version.value,
                "deleted": version.deleted,
                "source": version.source,
                "writtenAt": version.written_at.isoformat(),
            }
            for version in page
        ]
        before = page[-1].seq
    return versions


def board_cards_csv(*, actor: Any, project_id: UUID) -> str:
    """The board's cards, one row each in the board's order (column by column), for a
    spreadsheet. A cell a spreadsheet would run as a formula starts with ``'``."""
    project = access_board_export(actor=actor, project_id=project_id)
    columns, index = engine.get_values(
        [
            project_kv(project.id, layout.COLUMNS_KEY),
            project_kv(project.id, layout.INDEX_KEY),
        ]
    )
    titles = {
        column["id"]: column["title"]
        for column in layout.normalize_columns(None if columns is None else columns.value)
    }
    card_ids = layout.normalize_index(None if index is None else index.value)
    cards = []
    for start in range(0, len(card_ids), SCAN_CHUNK):
        chunk = card_ids[start : start + SCAN_CHUNK]
        keys = [layout.card_key(card_id) for card_id in chunk]
        keys += [board_comments.COMMENTS_PREFIX + card_id for card_id in chunk]
        stored = engine.get_values([project_kv(project.id, key) for key in keys])
        for card_id, stored_card, comments in zip(
            chunk, stored[: len(chunk)], stored[len(chunk) :], strict=True
        ):
            shown = layout.normalize_card(
                card_id, None if stored_card is None else stored_card.value
            )
            if shown is not None:
                count = len(board_comments.normalize_comments(comments and comments.value))
                cards.append((shown, count))
    order = list(titles)
    cards.sort(
        key=lambda item: (
            order.index(item[0]["column"]) if item[0]["column"] in titles else len(order),
            item[0]["rank"],
        )
    )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    for card, count in cards:
        done = sum(1 for item in card["checklist"] if item["done"])
        row = [
            titles.get(card["column"], card["column"]),
            card["title"],
            card["description"],
            ", ".join(card["labels"]),
            ", ".join(card["assignees"]),
            card["due"] or "",
            done,
            len(card["checklist"]),
            count,
            "yes" if card["archived"] else "no",
        ]
        writer.writerow([_cell(value) for value in row])
    return out.getvalue()


def _cell(value: object) -> object:
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
