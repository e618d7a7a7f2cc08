"""board_cards actions on a card's kept versions: ``history`` reads them as the Board's
Activity does (``kv.getHistory`` of ``card:<id>``, newest first), and ``restore_version``
brings one back like the card dialog's restore: the fields a restore may change
(``RESTORABLE``, the page's board-history.js), written over the revision the agent read,
so a change someone made since is a ``conflict`` carrying the card as it is now, never
overwritten unseen. The write's source names the version (``restoredFrom``), which the
Activity shows as "restored an earlier version"."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Final

from kanban.data.board import layout
from kanban.data.board.races import Raced
from kanban.data.board.ranks import rank_for_placement
from kanban.data.kv import project_kv_history
from storage.errors import ErrorCode, KanbanError, invalid_argument

if TYPE_CHECKING:
    from kanban.data.board.cards import Call

#: board-history.js RESTORABLE: what a restore may bring back (never comments or files).
RESTORABLE: Final = (
    "title",
    "description",
    "column",
    "assignees",
    "labels",
    "start",
    "due",
    "item",
    "checklist",
    "archived",
)
#: Pages of kept versions a restore looks through for the one named.
_PAGES: Final = 10


def _versions(call: Call, card_id: str, *, before: object, limit: object) -> dict[str, Any]:
    return project_kv_history(
        target=call.target,
        key=layout.card_key(card_id),
        before=before,
        limit=limit,
    )


def history(call: Call) -> Any:
    """``{versions: [{revision, at, who, via, agent, restoredFrom, card}], cursor}``;
    ``card`` is null for a version that deleted it."""
    card_id = call.card_id()
    read = _versions(
        call, card_id, before=call.arguments.get("cursor"), limit=call.arguments.get("limit")
    )
    versions = []
    for entry in read["entries"]:
        source = entry.get("source") if isinstance(entry.get("source"), dict) else {}
        versions.append(
            {
                "revision": entry["revision"],
                "at": entry["writtenAt"],
                "who": str(source.get("user") or "someone"),
                "via": str(source.get("via") or ""),
                "agent": source.get("agent") if isinstance(source.get("agent"), str) else None,
                "restoredFrom": source.get("restoredFrom")
                if isinstance(source.get("restoredFrom"), str)
                else None,
                "card": None
                if entry.get("deleted")
                else layout.normalize_card(card_id, entry.get("value")),
            }
        )
    return {"versions": versions, "cursor": read["cursor"]}


def _version(call: Call, card_id: str, wanted: str) -> dict[str, Any]:
    before = None
    for _ in range(_PAGES):
        read = _versions(call, card_id, before=before, limit=100)
        for entry in read["entries"]:
            if entry["revision"] == wanted:
                card = layout.normalize_card(card_id, entry.get("value"))
                if card is None:
                    break
                return card
        before = read["cursor"]
        if before is None:
            break
    raise KanbanError(
        ErrorCode.NOT_FOUND, f"no kept version {wanted!r} of this card", field="version"
    )


def restore_version(call: Call) -> Any:
    card_id = call.card_id()
    wanted, seen = call.arguments.get("version"), call.arguments.get("revision")
    if not isinstance(wanted, str) or not wanted:
        raise invalid_argument("version is a revision history answered", field="version")
    if not isinstance(seen, str) or not seen:
        raise invalid_argument("revision is the card's revision you read", field="revision")
    version = _version(call, card_id, wanted)
    board = call.read_board()
    current, entry = call.read_card(card_id)
    stale = KanbanError(
        ErrorCode.CONFLICT,
        "the card changed since the revision you read; read it again and decide",
        current={**current, "revision": entry.revision},
    )
    if entry.revision != seen:
        raise stale
    fields = {name: version[name] for name in RESTORABLE if current[name] != version[name]}
    if "column" in fields:
        if fields["column"] not in {column["id"] for column in board.columns}:
            del fields["column"]  # a column that is gone: the card stays where it is
        else:
            ranks = [rank for rank, _ in board.column_order(fields["column"], without=card_id)]
            fields["rank"] = rank_for_placement(ranks, len(ranks))
    stored = {**entry.value, **layout.stored_fields(fields)}
    restoring = dataclasses.replace(
        call, provenance=dataclasses.replace(call.provenance, restored_from=wanted)
    )
    try:
        revision = restoring.set(layout.card_key(card_id), stored, entry.revision)
    except Raced:
        raise stale from None
    card = layout.normalize_card(card_id, stored)
    assert card is not None
    return {**card, "revision": revision}
