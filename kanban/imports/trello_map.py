"""A checked Trello export mapped onto the Board's layout (``kanban.data.board.layout``),
with a tally of what went where and what could not.

What the Board page shows is written where it reads it: columns, cards in order, titles,
descriptions, labels (by name, their colours in the board's label set ``board:labels``),
assignees, due dates, archived cards, checklists and comments. What it does not show yet is
kept beside it, never dropped: each card's ``trello`` object (its Trello id and link, start
date, due time and whether it is done, label colours as Trello wrote them, people who are
not users here, every checklist with its items' due dates and members, attachments as
links, custom field values), and the board's ``trello:*`` keys (its lists, closed ones too,
labels, custom fields, members and ``pluginData``). The page keeps fields it does not know
when it changes a card.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from kanban.data.board import comments as board_comments
from kanban.data.board import layout
from kanban.data.demo import demo_ranks
from kanban.imports.trello_labels import BOARD_LABELS_KEY, label_set
from kanban.imports.trello_shape import Export

#: The Board's KV keys for what its page does not show (yet).
LISTS_KEY: Final = "trello:lists"
LABELS_KEY: Final = "trello:labels"
MEMBERS_KEY: Final = "trello:members"
CUSTOM_FIELDS_KEY: Final = "trello:customFields"
PLUGIN_DATA_KEY: Final = "trello:pluginData"
BOARD_KEY: Final = "trello:board"
EXTRA_KEYS: Final = (
    BOARD_KEY,
    LISTS_KEY,
    LABELS_KEY,
    MEMBERS_KEY,
    CUSTOM_FIELDS_KEY,
    PLUGIN_DATA_KEY,
    BOARD_LABELS_KEY,
)
#: An unmatched person's name on a card or comment: a space and brackets are in no
#: username, so it never passes for one of this server's people.
UNMATCHED: Final = "{name} (Trello)"
FORMER_MEMBER: Final = "Former member"


@dataclass
class Tally:
    """What was imported (counts) and what was skipped, per field and why."""

    counts: Counter[str] = field(default_factory=Counter)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def skip(self, what: str, item_id: str, why: str) -> None:
        self.skipped.append({"what": what, "id": item_id, "why": why})


@dataclass
class Plan:
    """The Board's values for one export, before they meet the board they go to."""

    columns: list[dict[str, Any]]
    cards: dict[str, dict[str, Any]]
    #: Each card's comments from the export, oldest first (none: no key).
    comments: dict[str, list[dict[str, Any]]]
    extras: dict[str, Any]
    tally: Tally


@dataclass(frozen=True, slots=True)
class People:
    """Trello members as this server knows them: a username when mapped, else a name."""

    usernames: dict[str, str]
    members: dict[str, dict[str, Any]]

    def name_of(self, member_id: object, creator: object = None) -> tuple[str, bool]:
        """The username (True) or kept name (False) of a Trello member; ``creator`` is the
        ``memberCreator`` an action carries, which names people who left the board."""
        if isinstance(member_id, str) and member_id in self.usernames:
            return self.usernames[member_id], True
        member = self.members.get(member_id) if isinstance(member_id, str) else None
        for source in (member, creator):
            if isinstance(source, dict):
                for name in ("fullName", "username"):
                    if isinstance(source.get(name), str) and source[name].strip():
                        return UNMATCHED.format(name=source[name].strip()), False
        return UNMATCHED.format(name=FORMER_MEMBER), False


def _pos(item: dict[str, Any]) -> float:
    pos = item.get("pos")
    return float(pos) if isinstance(pos, int | float) and not isinstance(pos, bool) else 0.0


def _in_order(items: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Trello's order: by ``pos``, ties in export order (sorted() is stable)."""
    return sorted(items.values(), key=_pos)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _moment(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def label_name(label: dict[str, Any]) -> str:
    """A label as the Board names it: Trello's name, or its colour when it has none (a
    Trello label can be a colour alone). The page splits labels at commas."""
    name = " ".join(_text(label.get("name")).replace(",", " ").split())
    return (name or _text(label.get("color")).strip())[: layout.MAX_LABEL]


def plan_export(export: Export, *, people: People, progress: Callable[[int], None]) -> Plan:
    tally = Tally()
    lists = _in_order(export.lists)
    closed = {item["id"] for item in lists if item.get("closed") is True}
    columns = []
    for item in lists:
        if item["id"] in closed:
            tally.counts["lists archived"] += 1
            continue
        title = _text(item.get("name")).strip()[: layout.MAX_TEXT] or item["id"]
        columns.append({"id": item["id"], "title": title, "wip": _wip(item)})
        tally.counts["lists"] += 1
    labels = {label_id: label_name(label) for label_id, label in export.labels.items()}
    for label_id, name in labels.items():
        if name:
            tally.counts["labels"] += 1
        else:
            tally.skip("label", label_id, "it has neither a name nor a colour")
    checklists = _checklists(export)
    attachments_by_card = _attachments(export)
    fields = _custom_field_names(export)
    cards: dict[str, dict[str, Any]] = {}
    for done, card in enumerate(_cards_in_order(export), start=1):
        cards[card["id"]] = _card(
            card,
            export=export,
            closed_list=card["idList"] in closed,
            labels=labels,
            people=people,
            checklists=checklists,
            attachments=attachments_by_card,
            fields=fields,
            tally=tally,
        )
        progress(done)
    for list_id in closed:
        in_list = [card_id for card_id, card in cards.items() if card["column"] == list_id]
        if in_list:
            tally.skip(
                "list",
                list_id,
                f"closed in Trello: no column; its {len(in_list)} card(s) are archived",
            )
    extras = _extras(export, lists=lists)
    extras[BOARD_LABELS_KEY] = label_set(export, names=labels)
    tally.counts["label colours"] += len(extras[BOARD_LABELS_KEY])
    tally.counts["plugin data entries"] += len(extras[PLUGIN_DATA_KEY])
    tally.counts["start dates"] += sum(1 for card in cards.values() if "start" in card["trello"])
    return Plan(
        columns=columns,
        cards=cards,
        comments=_comments(export, people=people, cards=cards, tally=tally),
        extras=extras,
        tally=tally,
    )


def _wip(item: dict[str, Any]) -> int:
    limit = item.get("softLimit")
    return limit if type(limit) is int and 0 < limit <= 999 else 0


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _cards_in_order(export: Export) -> list[dict[str, Any]]:
    """Cards list by list in the lists' order, each list's cards by ``pos``."""
    return sorted(
        export.cards.values(),
        key=lambda card: (_pos(export.lists[card["idList"]]), card["idList"], _pos(card)),
    )


def _card(
    card: dict[str, Any],
    *,
    export: Export,
    closed_list: bool,
    labels: dict[str, str],
    people: People,
    checklists: dict[str, list[dict[str, Any]]],
    attachments: dict[str, list[dict[str, Any]]],
    fields: dict[str, dict[str, Any]],
    tally: Tally,
) -> dict[str, Any]:
    card_id = card["id"]
    title = " ".join(_text(card.get("name")).split())
    if len(title) > layout.MAX_TEXT:
        tally.skip("title", card_id, f"longer than {layout.MAX_TEXT} characters: cut")
    description = _text(card.get("desc"))
    if len(description) > layout.MAX_DESCRIPTION:
        tally.skip(
            "description",
            card_id,
            f"longer than {layout.MAX_DESCRIPTION} characters: the Board shows the "
            "beginning; all of it kept under trello.desc",
        )
    assignees, members = _assignees(card, people=people, tally=tally)
    kept: dict[str, Any] = {"id": card_id, "list": card["idList"]}
    for name in ("url", "shortUrl", "start", "due", "dueComplete"):
        if card.get(name) is not None:
            kept[name] = card[name]
    if len(description) > layout.MAX_DESCRIPTION:
        kept["desc"] = description
    card_labels = _card_labels(card, export=export, labels=labels, tally=tally)
    kept["labels"] = [
        {"name": labels.get(label_id, ""), "color": export.labels[label_id].get("color")}
        for label_id in card.get("idLabels", [])
        if label_id in export.labels
    ]
    if members:
        kept["members"] = members
    items, kept_checklists = _card_checklists(card, checklists=checklists, tally=tally)
    if kept_checklists:
        kept["checklists"] = kept_checklists
    if attachments.get(card_id):
        kept["attachments"] = attachments[card_id]
        tally.counts["attachments (links)"] += len(attachments[card_id])
    values = _custom_values(card, fields=fields, tally=tally)
    if values:
        kept["customFields"] = values
    archived = card.get("closed") is True or closed_list
    tally.counts["cards"] += 1
    tally.counts["cards archived"] += archived
    return {
        "id": card_id,
        "title": title[: layout.MAX_TEXT] or "Untitled",
        "description": description[: layout.MAX_DESCRIPTION],
        "assignee": assignees[0] if assignees else "",
        "assignees": assignees,
        "labels": card_labels,
        "due": _due(card, tally=tally),
        "column": card["idList"],
        "archived": archived,
        "checklist": items,
        "trello": kept,
    }


def _assignees(
    card: dict[str, Any], *, people: People, tally: Tally
) -> tuple[list[str], list[str]]:
    """The card's people as the Board shows them (usernames, and the names of people who
    are no user here), and all of them as kept under ``trello.members``."""
    assignees: list[str] = []
    everyone: list[str] = []
    for member_id in card.get("idMembers", []):
        name, _ = people.name_of(member_id)
        everyone.append(name)
        if name in assignees:
            continue
        if len(assignees) >= layout.MAX_ASSIGNEES:
            tally.skip(
                "member",
                f"{card['id']}/{member_id}",
                f"past the Board's {layout.MAX_ASSIGNEES} assignees: kept under trello.members",
            )
            continue
        assignees.append(name)
    return assignees, everyone


def _card_labels(
    card: dict[str, Any], *, export: Export, labels: dict[str, str], tally: Tally
) -> list[str]:
    names: list[str] = []
    for label_id in card.get("idLabels", []):
        name = labels.get(label_id) if isinstance(label_id, str) else None
        if name is None:
            tally.skip("label", f"{card['id']}/{label_id}", "the export holds no such label")
        elif name and name.casefold() not in {n.casefold() for n in names}:
            if len(names) >= layout.MAX_LABELS:
                tally.skip(
                    "label",
                    f"{card['id']}/{label_id}",
                    f"past the Board's {layout.MAX_LABELS} labels: kept under trello.labels",
                )
            else:
                names.append(name)
    return names


def _due(card: dict[str, Any], *, tally: Tally) -> str | None:
    """The Board's due date (a day, in UTC); Trello's time is kept under trello.due."""
    if card.get("due") is None:
        return None
    moment = _moment(card["due"])
    if moment is None:
        tally.skip("due", card["id"], f"{card['due']!r} is no date")
        return None
    return moment.astimezone(UTC).date().isoformat()


def _checklists(export: Export) -> dict[str, list[dict[str, Any]]]:
    """Each card's checklists in order, each with its items in order."""
    by_card: dict[str, list[dict[str, Any]]] = {}
    for checklist in _in_order(export.checklists):
        items = sorted(checklist.get("checkItems", []), key=_pos)
        by_card.setdefault(_text(checklist.get("idCard")), []).append(
            {"id": checklist["id"], "name": _text(checklist.get("name")), "items": items}
        )
    return by_card


def _card_checklists(
    card: dict[str, Any], *, checklists: dict[str, list[dict[str, Any]]], tally: Tally
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The Board's one checklist (every Trello checklist's items, in order) and all of
    them as Trello had them (names, item due dates and members)."""
    shown: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
    for checklist in checklists.get(card["id"], []):
        kept_items = []
        for item in checklist["items"]:
            text = " ".join(_text(item.get("name")).split())
            done = item.get("state") == "complete"
            kept_items.append(
                {
                    "id": item["id"],
                    "name": _text(item.get("name")),
                    "state": "complete" if done else "incomplete",
                    "due": item.get("due"),
                    "member": item.get("idMember"),
                }
            )
            tally.counts["checklist items"] += 1
            if not text:
                tally.skip("checklist item", item["id"], "it has no text")
            elif len(shown) >= layout.MAX_CHECKLIST:
                tally.skip(
                    "checklist item",
                    item["id"],
                    f"past the Board's {layout.MAX_CHECKLIST} items a card: kept under "
                    "trello.checklists, not shown",
                )
            else:
                if len(text) > layout.MAX_TEXT:
                    tally.skip(
                        "checklist item text",
                        item["id"],
                        f"longer than the Board's {layout.MAX_TEXT} characters: cut; all of "
                        "it kept under trello.checklists",
                    )
                shown.append({"id": item["id"], "text": text[: layout.MAX_TEXT], "done": done})
        kept.append({"id": checklist["id"], "name": checklist["name"], "items": kept_items})
    return shown, kept


def _attachments(export: Export) -> dict[str, list[dict[str, Any]]]:
    """Attachments as links (the files stay with Trello), from each card's own list."""
    found: dict[str, list[dict[str, Any]]] = {}
    for card in export.cards.values():
        for attachment in card.get("attachments") or []:
            if isinstance(attachment, dict) and isinstance(attachment.get("url"), str):
                found.setdefault(card["id"], []).append(
                    {
                        "name": _text(attachment.get("name")) or attachment["url"],
                        "url": attachment["url"],
                        "mimeType": attachment.get("mimeType"),
                        "date": attachment.get("date"),
                    }
                )
    return found


def _custom_field_names(export: Export) -> dict[str, dict[str, Any]]:
    return {
        field_id: {
            "name": _text(definition.get("name")),
            "type": _text(definition.get("type")),
            "options": {
                option.get("id"): option.get("value", {}).get("text")
                for option in definition.get("options") or []
                if isinstance(option, dict) and isinstance(option.get("value"), dict)
            },
        }
        for field_id, definition in export.custom_fields.items()
    }


def _custom_values(
    card: dict[str, Any], *, fields: dict[str, dict[str, Any]], tally: Tally
) -> list[dict[str, Any]]:
    values = []
    for item in card.get("customFieldItems") or []:
        if not isinstance(item, dict):
            continue
        definition = fields.get(item.get("idCustomField"))  # type: ignore[arg-type]
        if definition is None:
            tally.skip(
                "custom field value",
                _text(item.get("id")),
                "its field is not among the export's customFields",
            )
            continue
        value: Any = definition["options"].get(item.get("idValue"))
        if value is None and isinstance(item.get("value"), dict):
            value = next(iter(item["value"].values()), None)
        values.append({"field": definition["name"], "type": definition["type"], "value": value})
        tally.counts["custom field values"] += 1
    return values


def _comments(
    export: Export, *, people: People, cards: dict[str, dict[str, Any]], tally: Tally
) -> dict[str, list[dict[str, Any]]]:
    """Each card's ``commentCard`` actions as the Board keeps comments, with their original
    author and date, oldest first (an export lists actions newest first)."""
    found: dict[str, list[tuple[datetime, dict[str, Any]]]] = {}
    for action in export.actions.values():
        if action.get("type") != "commentCard":
            continue
        data = _object(action.get("data"))
        card_id = _text(_object(data.get("card")).get("id"))
        text = _text(data.get("text"))
        at = _moment(action.get("date"))
        why = None
        if card_id not in cards:
            why = "its card is not in the export (deleted, or on another board)"
        elif not text.strip():
            why = "it has no text"
        elif at is None:
            why = "it has no date"
        if why is not None:
            tally.skip("comment", action["id"], why)
            continue
        assert at is not None
        if _units(text) > board_comments.MAX_COMMENT:
            text = _cut(text, board_comments.MAX_COMMENT)
            tally.skip(
                "comment text",
                action["id"],
                f"longer than the Board's {board_comments.MAX_COMMENT} characters: cut",
            )
        author, _ = people.name_of(action.get("idMemberCreator"), action.get("memberCreator"))
        edited = _moment(data.get("dateLastEdited"))
        comment = {
            "id": action["id"],
            "author": author[: board_comments.MAX_AUTHOR],
            "text": text,
            "at": _iso(at),
            "edited": None if edited is None else _iso(edited),
        }
        found.setdefault(card_id, []).append((at, comment))
    return {
        card_id: [comment for _, comment in sorted(pairs, key=lambda pair: pair[0])]
        for card_id, pairs in found.items()
    }


def _units(text: str) -> int:
    """The length the page measures: UTF-16 code units (an emoji is two)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _cut(text: str, units: int) -> str:
    """The longest beginning of ``text`` of at most ``units`` UTF-16 code units (as the
    page counts), never half an emoji."""
    out = text[:units]
    while _units(out) > units:
        out = out[:-1]
    return out


def _extras(export: Export, *, lists: list[dict[str, Any]]) -> dict[str, Any]:
    """The board's values the page does not read: kept so nothing a team had is lost."""
    roles = {
        membership.get("idMember"): membership.get("memberType")
        for membership in export.board.get("memberships") or []
        if isinstance(membership, dict)
    }
    board = {name: export.board.get(name) for name in ("id", "name", "desc", "url", "prefs")}
    return {
        BOARD_KEY: board,
        LISTS_KEY: [
            {
                "id": item["id"],
                "name": _text(item.get("name")),
                "closed": item.get("closed") is True,
                "pos": _pos(item),
            }
            for item in lists
        ],
        LABELS_KEY: [
            {"id": label["id"], "name": _text(label.get("name")), "color": label.get("color")}
            for label in export.labels.values()
        ],
        MEMBERS_KEY: [
            {
                "id": member["id"],
                "username": member.get("username"),
                "fullName": member.get("fullName"),
                "memberType": roles.get(member["id"]),
            }
            for member in export.members.values()
        ],
        CUSTOM_FIELDS_KEY: list(export.custom_fields.values()),
        PLUGIN_DATA_KEY: list(export.plugin_data.values()) + _card_plugin_data(export),
    }


def _card_plugin_data(export: Export) -> list[Any]:
    return [
        entry
        for card in export.cards.values()
        for entry in (card.get("pluginData") or [])
        if isinstance(entry, dict)
    ]


def ranks_for(cards: dict[str, dict[str, Any]]) -> None:
    """Give every card its rank: evenly spaced within its column, in the cards' order."""
    by_column: dict[str, list[dict[str, Any]]] = {}
    for card in cards.values():
        by_column.setdefault(card["column"], []).append(card)
    for column in by_column.values():
        for card, rank in zip(column, demo_ranks(len(column)), strict=True):
            card["rank"] = rank
