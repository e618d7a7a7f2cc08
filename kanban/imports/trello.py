"""Import a Trello board export as a Board (``trello_import``), or say what an import would
do (a dry run).

The export is checked whole first (``trello_shape``) and mapped onto the Board's layout
(``trello_map``); then the board it makes is written in one storage commit, inside the
transaction that creates the project, so a refused or failed import leaves nothing behind.
The importer is a trusted writer: it keeps each comment's original author and date, which
the Board's comment rule (``kanban.data.board.comments``) allows no person's write to do,
and every value it writes says so in its source (``"via": "import"``).

Importing the same export again finds the board it made (by the Trello board's id, kept in
``storage.namespaces.trello_import_marker``) and updates it: what Trello still has is
replaced, what Trello no longer has goes, and what was added on this server stays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID, uuid4

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from kanban.data.board import comments as board_comments
from kanban.data.board import layout
from kanban.imports import trello_labels, trello_map
from kanban.imports.earlier_import import board_of_earlier_import
from kanban.imports.quota import check_import_size
from kanban.imports.report import ImportReport
from kanban.imports.trello_shape import Export, parse_export
from kanban.models import Project
from kanban.projects.board_templates import Template, board_create
from kanban.projects.lifecycle import MAX_NAME_LENGTH
from storage import engine
from storage.errors import Conflict, ErrorCode, KanbanError, invalid_argument
from storage.namespaces import project_kv, trello_import_marker
from storage.writes import ExpectedSeq, Write, delete_value, set_value

#: Values read back per round trip when a board is imported again.
READ_CHUNK: Final = 500
#: What the report says is kept for the Board page of a later day.
KEPT_NOTES: Final = {
    "lists archived": ("closed lists", "trello:lists", "the Board has no archived columns"),
    "attachments (links)": ("attachments", "each card's trello.attachments", "no attachments"),
    "custom field values": ("custom fields", "trello:customFields, trello.customFields", "none"),
    "start dates": ("start dates", "each card's trello.start", "due days only"),
    "plugin data entries": ("pluginData", "trello:pluginData", "no Power-Ups"),
    "members kept by name": (
        "who is who in Trello",
        "trello:members, each card's trello.members",
        "people by username or kept name",
    ),
    "checklist items": (
        "checklist names, item due dates and members",
        "each card's trello.checklists",
        "one checklist of items",
    ),
}


@dataclass(frozen=True)
class TrelloReport(ImportReport):
    """What an import did (or, dry, would do): counts per field, and each thing skipped
    with why; ``kept`` names what the Board page does not show yet and where it is kept."""

    skipped: list[dict[str, str]]
    kept: list[dict[str, str]] = field(default_factory=list)
    #: The export's people no user here stands for (``left``: known from their actions
    #: only): what the page's mapping step offers to map.
    unmatched: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            **super().as_dict(),
            "skipped": [dict(item) for item in self.skipped],
            "kept": [dict(item) for item in self.kept],
            "unmatched": [dict(item) for item in self.unmatched],
        }


def trello_import(
    *,
    actor: Any,
    data: bytes,
    dry_run: bool = False,
    mapping: dict[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> TrelloReport:
    """Import the Trello board export ``data`` as a Board ``actor`` owns (or update the
    one an earlier import of it made). ``mapping`` maps Trello member ids or usernames to
    usernames here (a member whose Trello username is a username here needs none);
    ``progress(done, total)`` hears how far it is. Refuses bad input (``invalid_argument``,
    ``too_large``) writing nothing."""
    export = parse_export(data)
    tally = trello_map.Tally()
    people = _people(export, mapping=mapping, tally=tally)
    marker = engine.get_value(trello_import_marker(export.board_id))
    project = board_of_earlier_import(
        actor=actor, marker=marker, what="Trello board", package=layout.BOARD_PACKAGE
    )
    total = len(export.cards) + 1
    step = max(1, total // 100)

    def card_done(done: int) -> None:
        if progress is not None and (done % step == 0 or done == total - 1):
            progress(done, total)

    # Read before the mapping, which takes a while on a large board: whatever changes on
    # the board from here on stops the commit (each write expects the revision read).
    current = {} if project is None else _read_board(project, cards=list(export.cards))
    if progress is not None:
        progress(0, total)
    plan = trello_map.plan_export(export, people=people, progress=card_done)
    plan.tally.counts.update(tally.counts)
    plan.tally.skipped[:0] = tally.skipped
    values, deletes, expected = _merge(plan, current=current)
    created = project is None
    project_id = project.id if project is not None else uuid4()
    writes = _writes(
        project_id=project_id,
        values=values,
        deletes=deletes,
        expected=expected,
        source=_source(actor, export),
    )
    check_import_size(writes, counted="as the Board keeps it")
    if not dry_run:
        with transaction.atomic():
            if project is None:
                # Its columns are the export's lists, written below with the rest.
                project = board_create(
                    user=actor, name=_board_name(export), template=Template.BOARD, columns=False
                )
                writes = _writes(
                    project_id=project.id,
                    values=values,
                    deletes=deletes,
                    expected=expected,
                    source=_source(actor, export),
                )
            # Two imports of one export at once: the second finds the marker changed
            # (Conflict) and writes nothing, its new project included.
            marker_write = set_value(
                trello_import_marker(export.board_id),
                {"projectId": str(project.id)},
                expected_seq=None if marker is None else marker.seq,
            )
            try:
                engine.commit(
                    [*writes, marker_write],
                    max_project_bytes=int(settings.KANBAN_PROJECT_BYTES),
                )
            except Conflict:
                raise KanbanError(
                    ErrorCode.CONFLICT,
                    "this Trello board was imported meanwhile, or its board changed while "
                    "this import ran: nothing was written; import it again",
                ) from None
        project_id = project.id
    if progress is not None:
        progress(total, total)
    counts = dict(sorted(plan.tally.counts.items()))
    return TrelloReport(
        project_id=None if dry_run and created else project_id,
        board_name=export.name,
        dry_run=dry_run,
        created=created,
        counts=counts,
        skipped=plan.tally.skipped,
        kept=[
            {"what": what, "where": where, "why": f"the Board page shows {shows}"}
            for name, (what, where, shows) in KEPT_NOTES.items()
            if counts.get(name)
        ],
        unmatched=_unmatched(people, export=export),
    )


def _unmatched(people: trello_map.People, *, export: Export) -> list[dict[str, Any]]:
    return [
        {
            "id": member_id,
            "username": str(member.get("username") or ""),
            "fullName": str(member.get("fullName") or ""),
            "left": member_id not in export.members,
        }
        for member_id, member in people.members.items()
        if member_id not in people.usernames
    ]


def _people(
    export: Export, *, mapping: dict[str, str] | None, tally: trello_map.Tally
) -> trello_map.People:
    """Trello members (and people who left, known from their comments) mapped to users:
    by ``mapping`` (a member's id or Trello username), then by the same username."""
    mapping = _check_mapping(mapping)
    members = dict(export.members)
    for action in export.actions.values():
        creator = action.get("memberCreator")
        if isinstance(creator, dict) and layout.is_id(creator.get("id")):
            members.setdefault(creator["id"], creator)
    wanted = {
        mapping.get(member_id) or mapping.get(str(member.get("username"))) or member.get("username")
        for member_id, member in members.items()
    }
    users = {
        user.get_username(): user.get_username()
        for user in get_user_model().objects.filter(
            username__in=[name for name in wanted if isinstance(name, str)]
        )
    }
    unknown = sorted(set(mapping.values()) - users.keys())
    if unknown:
        raise invalid_argument(
            f"the mapping names {unknown[0]!r}, who is no user here", field="mapping"
        )
    usernames: dict[str, str] = {}
    for member_id, member in members.items():
        target = mapping.get(member_id) or mapping.get(str(member.get("username")))
        found = users.get(target or str(member.get("username")))
        left = member_id not in export.members
        if found is not None:
            usernames[member_id] = found
            tally.counts["members mapped"] += 1
        elif not left:
            tally.counts["members kept by name"] += 1
            tally.skip(
                "member",
                member_id,
                f"{member.get('username')!r} is no user here (map it to one): kept by name",
            )
    known = set(members) | {str(member.get("username")) for member in members.values()}
    for name in sorted(set(mapping) - known):
        tally.skip("mapping", name, "no member of the export has this id or username")
    return trello_map.People(usernames=usernames, members=members)


def _check_mapping(mapping: object) -> dict[str, str]:
    if mapping is None:
        return {}
    if not isinstance(mapping, dict) or not all(
        isinstance(key, str) and isinstance(value, str) and key and value
        for key, value in mapping.items()
    ):
        raise invalid_argument(
            "the mapping maps Trello member ids or usernames to usernames", field="mapping"
        )
    return mapping


def _board_name(export: Export) -> str:
    # A Trello name may hold what a project name may not (control characters, more than
    # the longest name): the board keeps what it can show.
    shown = "".join(c for c in export.name if c.isprintable() or c == " ").strip()
    return shown[:MAX_NAME_LENGTH] or "Trello board"


Values = dict[str, Any]


def _merge(
    plan: trello_map.Plan, *, current: dict[str, engine.StoredValue | None]
) -> tuple[Values, list[str], dict[str, ExpectedSeq]]:
    """The values to write, the keys to delete and the revision each key must still be at
    (what was read of the board, so a change made meanwhile stops the import)."""
    expected: dict[str, ExpectedSeq] = {
        key: (None if stored is None else stored.seq) for key, stored in current.items()
    }

    def now(key: str) -> Any:
        stored = current.get(key)
        return None if stored is None else stored.value

    before = _imported_before(now)
    trello_lists = {item["id"] for item in plan.extras[trello_map.LISTS_KEY]}
    columns = plan.columns + [
        column
        for column in layout.normalize_columns(now(layout.COLUMNS_KEY))
        if column["id"] not in before["lists"] and column["id"] not in trello_lists
    ]
    index = list(plan.cards) + [
        card_id
        for card_id in layout.normalize_index(now(layout.INDEX_KEY))
        if card_id not in plan.cards and card_id not in before["cards"]
    ]
    trello_map.ranks_for(plan.cards)
    values: Values = {layout.COLUMNS_KEY: columns, layout.INDEX_KEY: index, **plan.extras}
    values[trello_labels.BOARD_LABELS_KEY] = trello_labels.label_set_merged(
        plan.extras[trello_labels.BOARD_LABELS_KEY],
        current=now(trello_labels.BOARD_LABELS_KEY),
        imported_before=before["labels"],
    )
    for card_id, card in plan.cards.items():
        old = now(layout.card_key(card_id))
        merged = {**old, **card} if isinstance(old, dict) and not old.get("deleted") else card
        comments = _comments(
            card_id, plan, old=now(board_comments.COMMENTS_PREFIX + card_id), old_card=old
        )
        merged["commentCount"] = len(comments)
        merged["trello"]["comments"] = [
            comment["id"] for comment in comments if comment["id"] in _ids(plan, card_id)
        ]
        values[layout.card_key(card_id)] = merged
        if comments or now(board_comments.COMMENTS_PREFIX + card_id) is not None:
            values[board_comments.COMMENTS_PREFIX + card_id] = comments
        plan.tally.counts["comments"] += len(merged["trello"]["comments"])
    gone = sorted(before["cards"] - plan.cards.keys())
    deletes = [layout.card_key(card_id) for card_id in gone]
    deletes += [board_comments.COMMENTS_PREFIX + card_id for card_id in gone]
    if gone:
        plan.tally.counts["cards removed (gone from Trello)"] = len(gone)
    return values, deletes, expected


def _ids(plan: trello_map.Plan, card_id: str) -> set[str]:
    return {comment["id"] for comment in plan.comments.get(card_id, [])}


def _comments(
    card_id: str, plan: trello_map.Plan, *, old: object, old_card: object
) -> list[dict[str, Any]]:
    """The export's comments on a card, with those written here since the last import, in
    time order; past the Board's cap, the oldest of Trello's are skipped."""
    stored = board_comments.normalize_comments(old)
    imported = plan.comments.get(card_id, [])
    ids = _ids(plan, card_id)
    # What an earlier import wrote and Trello no longer has is not this server's to keep.
    kept_before = old_card.get("trello") if isinstance(old_card, dict) else None
    previous = ids | set(kept_before.get("comments") or [] if isinstance(kept_before, dict) else [])
    local = [comment for comment in stored if comment["id"] not in previous]
    room = max(0, board_comments.MAX_COMMENTS - len(local))
    for comment in imported[: max(0, len(imported) - room)]:
        plan.tally.skip(
            "comment",
            comment["id"],
            f"past the Board's {board_comments.MAX_COMMENTS} comments a card: the oldest "
            "are left out",
        )
    kept = imported[len(imported) - min(room, len(imported)) :]
    return sorted(kept + local, key=lambda comment: comment["at"])


def _imported_before(now: Callable[[str], Any]) -> dict[str, set[str]]:
    """The lists, cards and label names an earlier import of this board wrote (its trello
    marks)."""
    lists, labels = now(trello_map.LISTS_KEY), now(trello_map.LABELS_KEY)
    cards = set()
    for card_id in layout.normalize_index(now(layout.INDEX_KEY)):
        card = now(layout.card_key(card_id))
        if isinstance(card, dict) and isinstance(card.get("trello"), dict):
            cards.add(card_id)
    return {
        "lists": {
            item["id"]
            for item in (lists if isinstance(lists, list) else [])
            if isinstance(item, dict) and isinstance(item.get("id"), str)
        },
        "cards": cards,
        # Casefolded, as the label set matches names.
        "labels": {
            trello_map.label_name(item).casefold()
            for item in (labels if isinstance(labels, list) else [])
            if isinstance(item, dict)
        },
    }


def _read_board(project: Project, *, cards: list[str]) -> dict[str, engine.StoredValue | None]:
    """Every key an import of this board (with these Trello cards) reads or replaces, as
    stored now."""
    keys = [layout.COLUMNS_KEY, layout.INDEX_KEY, *trello_map.EXTRA_KEYS]
    head = dict(zip(keys, _get(project.id, keys), strict=True))
    index = head[layout.INDEX_KEY]
    cards = sorted(set(cards) | set(layout.normalize_index(None if index is None else index.value)))
    card_keys = [layout.card_key(card_id) for card_id in cards]
    card_keys += [board_comments.COMMENTS_PREFIX + card_id for card_id in cards]
    return head | dict(zip(card_keys, _get(project.id, card_keys), strict=True))


def _get(project_id: UUID, keys: list[str]) -> list[engine.StoredValue | None]:
    found: list[engine.StoredValue | None] = []
    for start in range(0, len(keys), READ_CHUNK):
        chunk = keys[start : start + READ_CHUNK]
        found += engine.get_values([project_kv(project_id, key) for key in chunk])
    return found


def _source(actor: Any, export: Export) -> dict[str, Any]:
    return {
        "user": actor.get_username(),
        "userId": actor.pk,
        "via": "import",
        "import": "trello",
        "trelloBoard": export.board_id,
    }


def _writes(
    *,
    project_id: UUID,
    values: Values,
    deletes: list[str],
    expected: dict[str, ExpectedSeq],
    source: dict[str, Any],
) -> list[Write]:
    """The commit's writes, each at the revision it was read at (absent: still absent),
    each value within the value limit: one too large refuses the import, naming its key."""
    keep, limit = int(settings.KANBAN_HISTORY_REVISIONS), int(settings.KANBAN_MAX_VALUE_BYTES)
    writes: list[Write] = []
    for key, value in values.items():
        try:
            writes.append(
                set_value(
                    project_kv(project_id, key),
                    value,
                    expected_seq=expected.get(key),
                    source=source,
                    max_bytes=limit,
                    keep=keep,
                )
            )
        except KanbanError as error:
            raise KanbanError(error.code, f"{key}: {error.message}", **error.details) from None
    for key in deletes:
        seq = expected.get(key)
        if seq is not None:
            writes.append(
                delete_value(
                    project_kv(project_id, key), expected_seq=seq, source=source, keep=keep
                )
            )
    return writes
