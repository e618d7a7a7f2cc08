"""Board cards for agents: list, get, add, update, move, archive and restore, each keeping
the Board's layout whole (``kanban.data.board.layout``) while people and other agents write
the same board.

A bare ``set`` of the index (``board:cards``) from a stale read erases every card added
since; here every write is a compare-and-set on the revision just read, retried on a lost
race, so nothing anyone else wrote is lost. ``update`` merges as the Board's card dialog
does: only the fields given, against the card as the agent read it (its ``revision``); a
field someone else changed meanwhile, to something else, is a ``conflict`` naming it.

Every read and write goes through ``kanban.data.kv`` (the one access decision; writes
record the provenance, ``via: "mcp"`` and the token).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

from kanban.data.actions import action_in
from kanban.data.board import (
    card_history,
    card_parts,
    card_reach,
    columns,
    comments,
    labels,
    layout,
)
from kanban.data.board.races import Raced, retrying
from kanban.data.board.ranks import rank_for_placement
from kanban.data.kv import (
    Provenance,
    project_kv_get,
    project_kv_get_many,
    project_kv_history,
    project_kv_set,
)
from kanban.data.notifications import notification_send
from kanban.data.target import Target
from kanban.models import ApiToken, Membership, Project
from kanban.projects.package_changes import package_name
from storage.errors import ErrorCode, KanbanError, invalid_argument
from storage.kv import Entry
from storage.limits import MAX_BATCH_KEYS

DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 200
ACTIONS: Final = (
    "list",
    "get",
    "add",
    "update",
    "move",
    "archive",
    "restore",
    "comment",
    "comment_edit",
    "comment_delete",
    "checklist_add",
    "checklist_tick",
    "checklist_rename",
    "checklist_reorder",
    "checklist_remove",
    "column_add",
    "column_update",
    "column_reorder",
    "history",
    "restore_version",
    "labels",
    "label_add",
    "label_update",
    "label_remove",
    "copy_to_board",
    "move_to_board",
    "search",
)
WRITES: Final = frozenset(ACTIONS) - {"list", "get", "history", "labels", "search"}


@dataclass(frozen=True, slots=True)
class Board:
    """One read of the whole board: its columns, and each card on the index with the
    revision it was read at."""

    columns: list[dict[str, Any]]
    index: Entry | None
    cards: list[tuple[dict[str, Any], str]]
    #: False: the board has no columns yet and ``columns`` are the defaults it would get.
    columns_stored: bool = True

    def position(self, card: dict[str, Any]) -> int:
        """Where the Board shows the card: its column, or the first one if that is gone."""
        ids = [column["id"] for column in self.columns]
        return ids.index(card["column"]) if card["column"] in ids else 0

    def shown(self, card: dict[str, Any]) -> dict[str, Any]:
        column = self.columns[self.position(card)]["id"] if self.columns else card["column"]
        return {**card, "column": column}

    def column_order(self, column: str, *, without: str | None = None) -> list[tuple[str, str]]:
        """(rank, id) of the column's cards as the Board shows them, in order."""
        shown = (self.shown(card) for card, _ in self.cards)
        return sorted(
            (card["rank"], card["id"])
            for card in shown
            if card["column"] == column and not card["archived"] and card["id"] != without
        )


@dataclass(frozen=True, slots=True)
class Call:
    user: Any
    project_id: UUID
    arguments: Mapping[str, Any]
    provenance: Provenance
    #: The caller's API token (MCP): what it reaches bounds a transfer's target and a search.
    token: ApiToken | None = None

    @property
    def target(self) -> Target:
        """The Board's own KV, as the person calling."""
        return Target(user=self.user, project_id=self.project_id)

    def get(self, key: str) -> Entry | None:
        return project_kv_get(target=self.target, key=key)

    def set(self, key: str, value: Any, expected: str | None) -> str:
        """A compare-and-set on the revision just read; ``Raced`` when it lost."""
        try:
            return project_kv_set(
                target=self.target,
                key=key,
                value=value,
                expected_revision=expected,
                provenance=self.provenance,
            )
        except KanbanError as error:
            if error.code == ErrorCode.CONFLICT:
                raise Raced from None
            raise

    def card_id(self, name: str = "id") -> str:
        return self.id_of(name, "a card id")

    def id_of(self, name: str, what: str) -> str:
        """The argument ``name``, which must be ``what`` (a card's, a comment's… id)."""
        value = self.arguments.get(name)
        if not layout.is_id(value):
            raise invalid_argument(f"{name} must be {what}", field=name)
        return str(value)

    def read_board(self) -> Board:
        columns_entry = self.get(layout.COLUMNS_KEY)
        index = self.get(layout.INDEX_KEY)
        ids = layout.normalize_index(None if index is None else index.value)
        cards = []
        for start in range(0, len(ids), MAX_BATCH_KEYS):
            batch = ids[start : start + MAX_BATCH_KEYS]
            read = project_kv_get_many(
                target=self.target,
                keys=[layout.card_key(i) for i in batch],
            )
            for card_id, item in zip(batch, read, strict=True):
                if isinstance(item, KanbanError):  # past the read's byte budget: alone
                    item = self.get(layout.card_key(card_id))
                card = None if item is None else layout.normalize_card(card_id, item.value)
                if card is not None and item is not None:
                    cards.append((card, item.revision))
        # A board without columns shows the page's defaults, as the page would on opening it.
        columns = (
            [dict(column) for column in layout.DEFAULT_COLUMNS]
            if columns_entry is None
            else layout.normalize_columns(columns_entry.value)
        )
        return Board(
            columns=columns, index=index, cards=cards, columns_stored=columns_entry is not None
        )

    def write_default_columns(self) -> None:
        """What the page does on opening a board that has no columns (a Board project made
        before ``board_create`` wrote them, or by a package import): the defaults, only
        where none exist; columns written meanwhile stand."""
        with contextlib.suppress(Raced):
            self.set(layout.COLUMNS_KEY, [dict(c) for c in layout.DEFAULT_COLUMNS], None)

    def read_card(self, card_id: str) -> tuple[dict[str, Any], Entry]:
        entry = self.get(layout.card_key(card_id))
        card = None if entry is None else layout.normalize_card(card_id, entry.value)
        if card is None or entry is None:
            raise KanbanError(ErrorCode.NOT_FOUND, f"no card {card_id!r} on this board")
        return card, entry

    def column(self, board: Board) -> str:
        column = self.arguments.get("column")
        ids = [c["id"] for c in board.columns]
        if column not in ids:
            raise invalid_argument(
                f"column must be one of this board's columns: {', '.join(ids) or 'none yet'}",
                field="column",
            )
        return str(column)


def board_action(
    *,
    action: str,
    user: Any,
    project_id: UUID,
    arguments: Mapping[str, Any],
    provenance: Provenance,
    token: ApiToken | None = None,
) -> Any:
    """One ``board_cards`` action on the built-in Board of ``project_id``, answered as JSON.
    Refused with ``invalid_argument`` on a project whose plugin is another."""
    run = action_in(_ACTIONS, action, of="board_cards")
    check_built_in_board(project_id)
    return run(Call(user, project_id, arguments, provenance, token))


def check_built_in_board(project_id: UUID) -> None:
    project = Project.objects.filter(pk=project_id).only("package_json", "name").first()
    if project is None:
        raise KanbanError(ErrorCode.NOT_FOUND, "no such project")
    found = package_name(project.package_json)
    if found != layout.BOARD_PACKAGE:
        raise invalid_argument(
            f"{project.name!r} runs the plugin {found or 'of no package'!r}, not the built-in "
            "Board: board_cards keeps the Board's layout only (use kv_store for other data)",
            field="project",
        )


def _answer(card: dict[str, Any] | None, revision: str) -> dict[str, Any]:
    assert card is not None  # a card just read or written normalises
    return {**card, "revision": revision}


# --- reading ------------------------------------------------------------------------------


def _cursor_of(key: tuple[int, str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode()


def _check_cursor(raw: object) -> tuple[int, str, str] | None:
    if raw is None:
        return None
    try:
        position, rank, card_id = json.loads(base64.urlsafe_b64decode(str(raw).encode()))
        if type(position) is int and isinstance(rank, str) and isinstance(card_id, str):
            return position, rank, card_id
    except (ValueError, TypeError, binascii.Error):
        pass
    raise invalid_argument("cursor is one a list answered", field="cursor")


def _check_limit(raw: object) -> int:
    if raw is None:
        return DEFAULT_LIMIT
    if type(raw) is not int or not 0 < raw <= MAX_LIMIT:
        raise invalid_argument(f"limit is 1 to {MAX_LIMIT}", field="limit")
    return raw


def _matches(card: dict[str, Any], arguments: Mapping[str, Any]) -> bool:
    if arguments.get("column") is not None and card["column"] != arguments["column"]:
        return False
    assignee = arguments.get("assignee")
    if assignee is not None and assignee.casefold() not in {
        a.casefold() for a in card["assignees"]
    }:
        return False
    label = arguments.get("label")
    if label is not None and label.casefold() not in {x.casefold() for x in card["labels"]}:
        return False
    text = arguments.get("text")
    if text:
        haystack = "\n".join([card["title"], card["description"], *card["labels"]]).casefold()
        if not all(word in haystack for word in text.casefold().split()):
            return False
    return card["archived"] is bool(arguments.get("archived", False))


def _list(call: Call) -> Any:
    for name in ("column", "assignee", "label", "text"):
        if call.arguments.get(name) is not None and not isinstance(call.arguments[name], str):
            raise invalid_argument(f"{name} is a string", field=name)
    if not isinstance(call.arguments.get("archived", False), bool):
        raise invalid_argument("archived is true or false", field="archived")
    after, limit = (
        _check_cursor(call.arguments.get("cursor")),
        _check_limit(call.arguments.get("limit")),
    )
    board = call.read_board()
    ordered = sorted(
        ((board.position(card), card["rank"], card["id"]), board.shown(card), revision)
        for card, revision in board.cards
    )
    chosen = [
        (key, card, revision)
        for key, card, revision in ordered
        if (after is None or key > after) and _matches(card, call.arguments)
    ]
    page = chosen[:limit]
    return {
        "columns": board.columns,
        "cards": [{**card, "revision": revision} for _, card, revision in page],
        "cursor": _cursor_of(page[-1][0]) if len(chosen) > limit else None,
    }


def _get(call: Call) -> Any:
    card, entry = call.read_card(call.card_id())
    return _answer(card, entry.revision)


# --- writing ------------------------------------------------------------------------------


def _check_members(call: Call, fields: dict[str, Any]) -> None:
    names = fields.get("assignees") or []
    if not names:
        return
    members = {
        name.casefold(): name
        for name in Membership.objects.filter(project_id=call.project_id).values_list(
            "user__username", flat=True
        )
    }
    strangers = [name for name in names if name.casefold() not in members]
    if strangers:
        raise invalid_argument(f"{strangers[0]!r} is not a member of this board", field="assignees")
    fields["assignees"] = [members[name.casefold()] for name in names]


def _add(call: Call) -> Any:
    """A card, with (all optional) its checklist, labels, assignees, dates and a first
    comment, every part checked before anything is written."""
    title = layout.check_title(call.arguments.get("title"))
    fields = layout.check_fields({**call.arguments, "title": title})
    checklist = layout.check_checklist(call.arguments.get("checklist", []))
    said = None
    if "text" in call.arguments:
        said = card_parts.new_comment(call, comments.check_comment_text(call.arguments["text"]))
    _check_members(call, fields)
    board = call.read_board()
    column = call.column(board)
    if not board.columns_stored:  # checked first: a refused add writes nothing
        call.write_default_columns()
        board = call.read_board()
        column = call.column(board)
    ranks = [rank for rank, _ in board.column_order(column)]
    card_id = layout.new_id()
    value = {
        "id": card_id,
        "title": title,
        "description": "",
        "assignees": [],
        "labels": [],
        "due": None,
        **fields,
        "column": column,
        "rank": rank_for_placement(ranks, len(ranks)),
        "item": None,
        "archived": False,
        "checklist": [{"id": layout.new_id(), "text": text, "done": False} for text in checklist],
        "commentCount": 0 if said is None else 1,
    }
    if said is not None:  # a new card's own comments: nobody else can have written them
        call.set(comments.COMMENTS_PREFIX + card_id, comments.comment_added(None, said), None)
    # The card, then the index: a reader never finds an id without its card.
    revision = call.set(layout.card_key(card_id), layout.stored_fields(value), None)

    def index_it() -> None:
        index = call.get(layout.INDEX_KEY)
        ids = layout.normalize_index(None if index is None else index.value)
        if card_id not in ids:
            call.set(layout.INDEX_KEY, [*ids, card_id], None if index is None else index.revision)

    retrying(index_it)
    card = layout.normalize_card(card_id, layout.stored_fields(value))
    assert card is not None
    return {**_answer(card, revision), **_notify_assigned(call, card, before=[])}


def _notify_assigned(call: Call, card: dict[str, Any], *, before: list[str]) -> dict[str, Any]:
    """Tells the people newly assigned, as the Board does; the write stands either way, and
    the answer says whom it told (or why it told nobody)."""
    new = [name for name in card["assignees"] if name not in before]
    if not new:
        return {}
    try:
        sent = notification_send(
            actor=call.user,
            project_id=call.project_id,
            users=new,
            text=f"assigned you “{card['title']}”",
            card=card["id"],
            via=call.provenance.via,
        )
    except KanbanError as error:
        return {"notified": [], "notifyError": error.as_dict()}
    return {"notified": sent["sent"]}


def _base_at(call: Call, card_id: str, revision: str) -> dict[str, Any] | None:
    """The card as it was at ``revision``, from its history (None: no longer kept)."""
    history = project_kv_history(
        target=call.target,
        key=layout.card_key(card_id),
        limit=100,
    )
    for version in history["entries"]:
        if version["revision"] == revision:
            return layout.normalize_card(card_id, version.get("value"))
    return None


def _update(call: Call) -> Any:
    card_id = call.card_id()
    fields = layout.check_fields(dict(call.arguments))
    if not fields:
        raise invalid_argument(
            f"update needs at least one of {', '.join(layout.EDITABLE)}", field="title"
        )
    _check_members(call, fields)
    seen = call.arguments.get("revision")
    if seen is not None and not isinstance(seen, str):
        raise invalid_argument("revision is the one get or list answered", field="revision")
    card, entry = call.read_card(card_id)
    base = card if seen is None or seen == entry.revision else _base_at(call, card_id, seen)
    result: dict[str, Any] = {}

    def write() -> None:
        current, now = call.read_card(card_id)
        conflicts = [
            name
            for name, value in fields.items()
            if (base is None or current[name] != base[name]) and current[name] != value
        ]
        if conflicts:
            raise KanbanError(
                ErrorCode.CONFLICT,
                f"someone else changed {', '.join(conflicts)} of this card meanwhile; "
                "read it again and decide",
                fields=conflicts,
                current=_answer(current, now.revision),
            )
        stored = {**now.value, **layout.stored_fields(fields)}
        result["revision"] = call.set(layout.card_key(card_id), stored, now.revision)
        result["before"] = current["assignees"]
        result["card"] = layout.normalize_card(card_id, stored)

    retrying(write)
    told = (
        _notify_assigned(call, result["card"], before=result["before"])
        if "assignees" in fields
        else {}
    )
    return {**_answer(result["card"], result["revision"]), **told}


def _move(call: Call) -> Any:
    card_id = call.card_id()
    before, after = call.arguments.get("before"), call.arguments.get("after")
    if before is not None and after is not None:
        raise invalid_argument("give before or after, not both", field="after")
    neighbour = before if before is not None else after
    if neighbour is not None and not layout.is_id(neighbour):
        raise invalid_argument("before and after are card ids", field="before")
    result: dict[str, Any] = {}

    def write() -> None:
        board = call.read_board()
        column = call.column(board)
        _, entry = call.read_card(card_id)
        cards = board.column_order(column, without=card_id)
        ids = [i for _, i in cards]
        if neighbour is not None and neighbour not in ids:
            raise invalid_argument(f"{neighbour!r} is not a card of {column!r}", field="before")
        at = len(ids) if neighbour is None else ids.index(neighbour) + (after is not None)
        if not board.columns_stored:
            call.write_default_columns()
            raise Raced  # read again, with the columns that stand now
        rank = rank_for_placement([r for r, _ in cards], at)
        stored = {**entry.value, "column": column, "rank": rank}
        result["revision"] = call.set(layout.card_key(card_id), stored, entry.revision)
        result["card"] = layout.normalize_card(card_id, stored)

    retrying(write)
    return _answer(result["card"], result["revision"])


def _archiving(archived: bool) -> Callable[[Call], Any]:
    def run(call: Call) -> Any:
        card_id = call.card_id()
        result: dict[str, Any] = {}

        def write() -> None:
            _, entry = call.read_card(card_id)
            stored = {**entry.value, "archived": archived}
            result["revision"] = call.set(layout.card_key(card_id), stored, entry.revision)
            result["card"] = layout.normalize_card(card_id, stored)

        retrying(write)
        return _answer(result["card"], result["revision"])

    return run


_ACTIONS: Final[dict[str, Callable[[Call], Any]]] = {
    "list": _list,
    "get": _get,
    "add": _add,
    "update": _update,
    "move": _move,
    "archive": _archiving(True),
    "restore": _archiving(False),
    "comment": card_parts.comment,
    "comment_edit": card_parts.comment_edit,
    "comment_delete": card_parts.comment_delete,
    "checklist_add": card_parts.checklist_add,
    "checklist_tick": card_parts.checklist_tick,
    "checklist_rename": card_parts.checklist_rename,
    "checklist_reorder": card_parts.checklist_reorder,
    "checklist_remove": card_parts.checklist_remove,
    "column_add": columns.column_add,
    "column_update": columns.column_update,
    "column_reorder": columns.column_reorder,
    "history": card_history.history,
    "restore_version": card_history.restore_version,
    "labels": labels.labels,
    "label_add": labels.label_add,
    "label_update": labels.label_update,
    "label_remove": labels.label_remove,
    "copy_to_board": card_reach.copy_to_board,
    "move_to_board": card_reach.move_to_board,
    "search": card_reach.search,
}
