"""A Trello board export read and checked before anything is mapped: the bytes a person
uploads are parsed with the project's JSON limits, and an export that is not the shape
Trello documents (``lists``, ``cards``, ``labels``, ``checklists``, ``members``,
``actions``, ``customFields``, ``pluginData``) is refused whole, naming the first problem.

Only what the importer relies on is checked: ids (they become the Board's keys), names,
the list each card is in, and the links between them. Everything else is read leniently
by the mapping, which reports what it could not use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from django.conf import settings

from kanban.data.board import layout
from storage import jsoncodec
from storage.errors import ErrorCode, KanbanError, invalid_argument

#: The export's collections, each a list of objects with an ``id`` seen once.
COLLECTIONS: Final = (
    "lists",
    "cards",
    "labels",
    "checklists",
    "members",
    "actions",
    "customFields",
    "pluginData",
)
#: Those the importer needs to find a board at all.
REQUIRED: Final = ("lists", "cards")


@dataclass(frozen=True, slots=True)
class Export:
    """A checked export: the board object, and each collection by id in export order."""

    board: dict[str, Any]
    lists: dict[str, dict[str, Any]]
    cards: dict[str, dict[str, Any]]
    labels: dict[str, dict[str, Any]]
    checklists: dict[str, dict[str, Any]]
    members: dict[str, dict[str, Any]]
    actions: dict[str, dict[str, Any]]
    custom_fields: dict[str, dict[str, Any]]
    plugin_data: dict[str, dict[str, Any]]

    @property
    def board_id(self) -> str:
        return str(self.board["id"])

    @property
    def name(self) -> str:
        return str(self.board["name"])


def import_bytes_limit() -> int:
    """The largest export accepted (``KANBAN_TRELLO_IMPORT_BYTES``)."""
    return int(settings.KANBAN_TRELLO_IMPORT_BYTES)


def parse_export(data: bytes) -> Export:
    """The export in ``data``, checked; refuses (``too_large``, ``invalid_argument``)
    anything else with a message naming the problem."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise invalid_argument("a Trello export is the bytes of its JSON file", field="file")
    limit = import_bytes_limit()
    if len(data) > limit:
        raise KanbanError(
            ErrorCode.TOO_LARGE,
            f"the file is {len(data)} bytes; a Trello export may be at most {limit}",
            field="file",
            limit=limit,
        )
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise invalid_argument(
            f"the file is not UTF-8 text (byte {error.start}), so not a Trello export",
            field="file",
        ) from None
    try:
        value = jsoncodec.decode(text)
        # json.loads nests as deep as the stack allows: the project's depth limit is
        # checked after, iteratively.
        jsoncodec.check_json(value)
    except KanbanError as error:
        raise invalid_argument(f"the file is not JSON a board can hold: {error.message}") from None
    return check_export(value)


def check_export(value: object) -> Export:
    if not isinstance(value, dict):
        raise invalid_argument("a Trello export is one JSON object (the board)", field="file")
    missing = [name for name in ("id", "name", *REQUIRED) if name not in value]
    if missing:
        raise invalid_argument(
            f"this JSON is not a Trello board export: it has no {', '.join(missing)}",
            field="file",
        )
    _check_id(value["id"], "the board")
    if not isinstance(value["name"], str) or not value["name"].strip():
        raise invalid_argument("the board has no name", field="file")
    found = {name: _collection(value, name) for name in COLLECTIONS}
    for list_id, trello_list in found["lists"].items():
        _check_name(trello_list, f"list {list_id}")
    for card_id, card in found["cards"].items():
        _check_name(card, f"card {card_id}")
        if card.get("idList") not in found["lists"]:
            raise invalid_argument(
                f"card {card_id} is in list {card.get('idList')!r}, which the export does not hold",
                field="file",
            )
        for name in ("idLabels", "idMembers", "idChecklists"):
            if not isinstance(card.get(name, []), list):
                raise invalid_argument(f"card {card_id}: {name} is not a list", field="file")
    for checklist_id, checklist in found["checklists"].items():
        items = checklist.get("checkItems", [])
        if not isinstance(items, list):
            raise invalid_argument(f"checklist {checklist_id}: checkItems is not a list")
        _by_id(items, f"checklist {checklist_id}'s items")
    return Export(
        board=value,
        lists=found["lists"],
        cards=found["cards"],
        labels=found["labels"],
        checklists=found["checklists"],
        members=found["members"],
        actions=found["actions"],
        custom_fields=found["customFields"],
        plugin_data=found["pluginData"],
    )


def _collection(value: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    raw = value.get(name, [])
    if not isinstance(raw, list):
        raise invalid_argument(f"the export's {name} is not a list", field="file")
    return _by_id(raw, name)


def _by_id(raw: list[Any], what: str) -> dict[str, dict[str, Any]]:
    """The objects of one collection by id; a duplicate id would make two of them one
    card (or list, or comment) on the Board, so it is refused."""
    found: dict[str, dict[str, Any]] = {}
    for position, item in enumerate(raw):
        if not isinstance(item, dict):
            raise invalid_argument(f"{what}[{position}] is not an object", field="file")
        item_id = _check_id(item.get("id"), f"{what}[{position}]")
        if item_id in found:
            raise invalid_argument(f"{what} holds the id {item_id} twice", field="file")
        found[item_id] = item
    return found


def _check_id(value: object, what: str) -> str:
    # Trello ids are 24 hex digits; they become the Board's keys (card:<id>), so anything
    # the Board would not take as an id is no Trello export.
    if not layout.is_id(value):
        raise invalid_argument(f"{what} has no id Trello would give ({value!r})", field="file")
    assert isinstance(value, str)
    return value


def _check_name(item: dict[str, Any], what: str) -> None:
    if not isinstance(item.get("name"), str):
        raise invalid_argument(f"{what} has no name", field="file")
