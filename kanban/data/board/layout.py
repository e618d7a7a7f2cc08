"""The Board plugin's key layout in its project's KV, as bridge_js/plugins/board/app.js
documents it, and the shapes its cards take:

    board:columns   [{id, title, wip}]
    board:cards     [cardId, ...]          the index: a card is on the board when listed
    card:<id>       {id, title, description, assignee, assignees, labels, start, due, column,
                     rank, item, archived, checklist: [{id, text, done}], commentCount};
                    {id, deleted: true} once deleted for good
    comments:<id>   [{id, author, text, at, edited}]
    board:labels    [{name, color}]        the label set: a card's label named here shows
                                           in the colour (one of Trello's ten base names)

Anyone who may write can store anything under these keys, so every read is normalised the
way the plugin normalises it (``normalizeCard``), and every field an agent gives is checked
before anything is written.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, Final

from kanban.data.board.ranks import DEFAULT_RANK, DIGITS, is_rank
from kanban.projects.board_templates import BOARD_COLUMNS_KEY
from kanban.projects.board_templates import DEFAULT_COLUMNS as DEFAULT_COLUMNS
from storage.errors import ErrorCode, KanbanError, invalid_argument

#: A Board's columns: DEFAULT_COLUMNS from the moment it is made (``board_create``).
COLUMNS_KEY: Final = BOARD_COLUMNS_KEY
INDEX_KEY: Final = "board:cards"
#: Read by the page as it is (a colour outside the palette is not shown), so a write of it
#: needs no check here; imports write it (kanban/imports/trello_labels.py).
LABELS_KEY: Final = "board:labels"
CARD_PREFIX: Final = "card:"
#: The npm name of the built-in Board's package (bridge_js/plugins/board/package.json):
#: board_cards keeps this plugin's layout and no other.
BOARD_PACKAGE: Final = "kanban-board-plugin"

#: The Board page's modules (the template every Board project copies).
PAGE: Final = Path(__file__).resolve().parents[3] / "bridge_js" / "plugins" / "board"


def page_constant(module: str, name: str) -> int:
    """A cap the Board page exports (``export const NAME = 123;``), read from its module so
    that the page and the server keep one number. The page cannot import JSON instead (its
    CSP connects nowhere); a module that no longer says it fails here, at import."""
    text = (PAGE / module).read_text(encoding="utf-8")
    found = re.search(rf"^export const {name} = (\d+);$", text, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"{PAGE / module} exports no number {name}")
    return int(found.group(1))


MAX_TEXT: Final = 200
MAX_DESCRIPTION: Final = 4000
MAX_LABELS: Final = 12
MAX_LABEL: Final = 40
MAX_ASSIGNEES: Final = 10
MAX_CHECKLIST: Final = page_constant("board-core.js", "MAX_CHECKLIST")
ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_DATE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
#: The fields an agent may set on a card, and the Board dialog's names for them.
EDITABLE: Final = ("title", "description", "labels", "assignees", "start", "due")


def new_id() -> str:
    """A fresh id for a card, a comment or a checklist item, as the page makes them."""
    return "".join(DIGITS[b % 36] for b in secrets.token_bytes(12))


def card_key(card_id: str) -> str:
    return CARD_PREFIX + card_id


def is_id(value: object) -> bool:
    return isinstance(value, str) and ID.fullmatch(value) is not None


def is_date(value: object) -> bool:
    """A day as YYYY-MM-DD that the calendar has (2027-02-30 and 2027-13-45 it has not):
    the one check of a card's dates, on what an agent gives and on what a read shows."""
    if not isinstance(value, str) or _DATE.fullmatch(value) is None:
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _start(value: dict[str, Any]) -> str | None:
    """The page's startOf: the card's own start, else the day a Trello import kept."""
    if "start" in value:
        return value["start"] if is_date(value["start"]) else None
    trello = value.get("trello")
    kept = trello.get("start") if isinstance(trello, dict) else None
    return kept[:10] if isinstance(kept, str) and is_date(kept[:10]) else None


def _text(value: object, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def normalize_index(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    return list(dict.fromkeys(item for item in value if is_id(item)))


def normalize_columns(value: object) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    seen: set[str] = set()
    columns = []
    for column in value:
        if not isinstance(column, dict) or not is_id(column.get("id")) or column["id"] in seen:
            continue
        seen.add(column["id"])
        wip = column.get("wip")
        wip = min(wip, 999) if type(wip) is int and wip > 0 else 0
        columns.append(
            {
                "id": column["id"],
                "title": _text(column.get("title"), MAX_TEXT) or column["id"],
                "wip": wip,
            }
        )
    return columns


def _labels(value: object) -> list[str]:
    labels: list[str] = []
    seen: set[str] = set()
    for raw in value if isinstance(value, list) else []:
        label = raw.strip()[:MAX_LABEL] if isinstance(raw, str) else ""
        if label and label.casefold() not in seen and len(labels) < MAX_LABELS:
            seen.add(label.casefold())
            labels.append(label)
    return labels


def _assignees(value: dict[str, Any]) -> list[str]:
    raw = value.get("assignees")
    names = raw if isinstance(raw, list) else [value.get("assignee")]
    found = [name.strip()[:MAX_TEXT] for name in names if isinstance(name, str) and name.strip()]
    return list(dict.fromkeys(found))[:MAX_ASSIGNEES]


def _checklist(value: object) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for item in value if isinstance(value, list) else []:
        if not isinstance(item, dict) or not is_id(item.get("id")) or item["id"] in seen:
            continue
        text = _text(item.get("text"), MAX_TEXT).strip()
        if text and len(items) < MAX_CHECKLIST:
            seen.add(item["id"])
            items.append({"id": item["id"], "text": text, "done": item.get("done") is True})
    return items


def normalize_card(card_id: str, value: object) -> dict[str, Any] | None:
    """A card as the Board shows it, or None when the key holds no card (absent, deleted
    for good, or not an object)."""
    if not isinstance(value, dict) or value.get("deleted"):
        return None
    assignees = _assignees(value)
    return {
        "id": card_id,
        "title": _text(value.get("title"), MAX_TEXT) or "Untitled",
        "description": _text(value.get("description"), MAX_DESCRIPTION),
        "assignees": assignees,
        "labels": _labels(value.get("labels")),
        "start": _start(value),
        "due": value["due"] if is_date(value.get("due")) else None,
        "column": value["column"] if isinstance(value.get("column"), str) else "",
        "rank": value["rank"] if is_rank(value.get("rank")) else DEFAULT_RANK,
        "item": value["item"][:200]
        if isinstance(value.get("item"), str) and value["item"]
        else None,
        "archived": value.get("archived") is True,
        "checklist": _checklist(value.get("checklist")),
        "commentCount": count
        if type(count := value.get("commentCount")) is int and count > 0
        else 0,
    }


def stored_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """What a change of the given (checked) fields writes: ``assignees`` beside the
    plugin's single ``assignee`` (its first), which Boards without several assignees show."""
    stored = dict(fields)
    if "assignees" in stored:
        stored["assignee"] = stored["assignees"][0] if stored["assignees"] else ""
    return stored


# --- what an agent gives ------------------------------------------------------------------


def check_title(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise invalid_argument("a card needs a title", field="title")
    if len(value) > MAX_TEXT:
        raise invalid_argument(f"a title is at most {MAX_TEXT} characters", field="title")
    return value.strip()


def check_fields(arguments: dict[str, Any]) -> dict[str, Any]:
    """The card fields among ``arguments``, each checked: a wrong one is refused, never
    cut or dropped."""
    fields: dict[str, Any] = {}
    if "title" in arguments:
        fields["title"] = check_title(arguments["title"])
    if "description" in arguments:
        description = arguments["description"]
        if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
            raise invalid_argument(
                f"a description is text of at most {MAX_DESCRIPTION} characters",
                field="description",
            )
        fields["description"] = description
    if "labels" in arguments:
        labels = arguments["labels"]
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise invalid_argument("labels is a list of strings", field="labels")
        if len(labels) > MAX_LABELS or any(len(x) > MAX_LABEL or not x.strip() for x in labels):
            raise invalid_argument(
                f"at most {MAX_LABELS} labels of 1 to {MAX_LABEL} characters", field="labels"
            )
        fields["labels"] = _labels(labels)
    if "assignees" in arguments:
        names = arguments["assignees"]
        if not isinstance(names, list) or not all(isinstance(x, str) and x for x in names):
            raise invalid_argument("assignees is a list of usernames", field="assignees")
        if len(names) > MAX_ASSIGNEES:
            raise invalid_argument(f"at most {MAX_ASSIGNEES} assignees", field="assignees")
        fields["assignees"] = list(dict.fromkeys(names))
    for name in ("start", "due"):
        if name in arguments:
            day = arguments[name]
            if day is not None and not is_date(day):
                raise invalid_argument(
                    f"{name} is a day YYYY-MM-DD that exists, or null", field=name
                )
            fields[name] = day
    return fields


# --- a card's checklist, changed as the page's changeChecklist changes it ------------------


def check_item_text(value: object) -> str:
    return check_shown_text(
        value, needs="a checklist item needs some text", named="a checklist item", limit=MAX_TEXT
    )


def check_shown_text(
    value: object,
    *,
    needs: str,
    named: str,
    limit: int,
    field: str = "text",
    units: Callable[[str], int] = len,
) -> str:
    """Text the page shows, stripped: some there (else ``needs``) and at most ``limit``
    characters as ``units`` counts them."""
    text = value.strip() if isinstance(value, str) else ""
    if not text:
        raise invalid_argument(needs, field=field)
    if units(text) > limit:
        raise invalid_argument(f"{named} is at most {limit} characters", field=field)
    return text


def check_list(
    value: object, *, limit: int, field: str, not_a_list: str, too_many: str
) -> list[Any]:
    """A list a card holds, whole: past ``limit`` entries it is refused as ``too_large``
    (naming the limit), never cut."""
    if not isinstance(value, list):
        raise invalid_argument(not_a_list, field=field)
    if len(value) > limit:
        raise KanbanError(ErrorCode.TOO_LARGE, too_many, field=field, limit=limit)
    return value


def appended(items: list[Any], item: Any, *, limit: int, too_many: str) -> list[Any]:
    """``items`` with ``item`` last, unless they hold ``limit`` already: then the new text
    is refused as ``too_large``."""
    if len(items) >= limit:
        raise KanbanError(ErrorCode.TOO_LARGE, too_many, field="text", limit=limit)
    return [*items, item]


def check_checklist(value: object) -> list[str]:
    """A new card's checklist as item texts (each checked, trimmed), in order."""
    listed = check_list(
        value,
        limit=MAX_CHECKLIST,
        field="checklist",
        not_a_list="checklist is a list of item texts",
        too_many=f"a card's checklist holds at most {MAX_CHECKLIST} items",
    )
    texts = []
    for text in listed:
        try:
            texts.append(check_item_text(text))
        except KanbanError as error:
            raise invalid_argument(error.message, field="checklist") from None
    return texts


def checklist_item_added(card: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    """The stored card with ``item`` (checked) last on its checklist, as stored now."""
    items = appended(
        _checklist(card.get("checklist")),
        item,
        limit=MAX_CHECKLIST,
        too_many=f"a card's checklist holds at most {MAX_CHECKLIST} items",
    )
    return {**card, "checklist": items}


def checklist_item_changed(
    card: dict[str, Any], item_id: str, change: dict[str, Any] | None
) -> dict[str, Any]:
    """The stored card with one item's fields changed (``{"done": True}``, ``{"text": ...}``
    checked), or the item removed (None); every other item as stored now, so a person
    ticking another meanwhile keeps theirs."""
    items = _checklist(card.get("checklist"))
    if item_id not in {item["id"] for item in items}:
        raise KanbanError(ErrorCode.NOT_FOUND, f"no item {item_id!r} on this card", field="item")
    changed = [
        item if item["id"] != item_id else None if change is None else {**item, **change}
        for item in items
    ]
    return {**card, "checklist": [item for item in changed if item is not None]}


def check_position(value: object) -> int:
    if type(value) is not int or value < 0:
        raise invalid_argument("position is a whole number from 0 (first)", field="position")
    return value


def moved_to(entries: list[dict[str, Any]], entry_id: str, position: int) -> list[dict[str, Any]]:
    """``entries`` with the one of ``entry_id`` (present) at ``position`` (past the end:
    last), every other in its order as stored now."""
    moving = next(entry for entry in entries if entry["id"] == entry_id)
    others = [entry for entry in entries if entry["id"] != entry_id]
    return [*others[:position], moving, *others[position:]]


def checklist_item_moved(card: dict[str, Any], item_id: str, position: int) -> dict[str, Any]:
    """The stored card with one item moved to ``position`` of its checklist."""
    items = _checklist(card.get("checklist"))
    if item_id not in {item["id"] for item in items}:
        raise KanbanError(ErrorCode.NOT_FOUND, f"no item {item_id!r} on this card", field="item")
    return {**card, "checklist": moved_to(items, item_id, position)}
