"""Trello board exports built in the shape Trello's "Export as JSON" writes them (the board
object with its ``lists``, ``cards``, ``labels``, ``checklists``, ``members``,
``memberships``, ``customFields``, ``actions``, ``pluginData`` and ``prefs``), for the
import's tests and its bench (``generated_export``)."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

_ids = itertools.count(1)


def trello_id() -> str:
    """A fresh id as Trello writes them: 24 hex digits."""
    return f"{next(_ids):024x}"


@dataclass
class TrelloExport:
    """A board being built; ``data()`` is the export's bytes."""

    name: str = "Launch plan"
    board_id: str = field(default_factory=trello_id)
    board: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.board = {
            "id": self.board_id,
            "name": self.name,
            "desc": "",
            "closed": False,
            "url": f"https://trello.com/b/{self.board_id[-8:]}/launch-plan",
            "prefs": {"permissionLevel": "private", "background": "blue"},
            "labelNames": {},
            "lists": [],
            "cards": [],
            "labels": [],
            "checklists": [],
            "members": [],
            "memberships": [],
            "customFields": [],
            "actions": [],
            "pluginData": [],
        }

    def member(self, username: str, full_name: str, *, on_board: bool = True) -> str:
        member_id = trello_id()
        if on_board:
            self.board["members"].append(
                {"id": member_id, "username": username, "fullName": full_name}
            )
            self.board["memberships"].append(
                {"id": trello_id(), "idMember": member_id, "memberType": "normal"}
            )
        return member_id

    def trello_list(self, name: str, *, closed: bool = False, pos: float | None = None) -> str:
        list_id = trello_id()
        pos = (len(self.board["lists"]) + 1) * 16384 if pos is None else pos
        self.board["lists"].append(
            {"id": list_id, "name": name, "closed": closed, "pos": pos, "idBoard": self.board_id}
        )
        return list_id

    def label(self, name: str, color: str | None) -> str:
        label_id = trello_id()
        self.board["labels"].append(
            {"id": label_id, "idBoard": self.board_id, "name": name, "color": color}
        )
        return label_id

    def card(self, list_id: str, name: str, *, pos: float | None = None, **fields: Any) -> str:
        card_id = trello_id()
        pos = (len(self.board["cards"]) + 1) * 16384 if pos is None else pos
        card = {
            "id": card_id,
            "name": name,
            "desc": "",
            "closed": False,
            "idList": list_id,
            "idBoard": self.board_id,
            "pos": pos,
            "due": None,
            "start": None,
            "dueComplete": False,
            "idLabels": [],
            "idMembers": [],
            "idChecklists": [],
            "attachments": [],
            "customFieldItems": [],
            "pluginData": [],
            "url": f"https://trello.com/c/{card_id[-8:]}",
            "shortUrl": f"https://trello.com/c/{card_id[-8:]}",
        }
        card.update(fields)
        self.board["cards"].append(card)
        return card_id

    def checklist(self, card_id: str, name: str, items: list[dict[str, Any]]) -> str:
        checklist_id = trello_id()
        check_items = [
            {
                "id": trello_id(),
                "idChecklist": checklist_id,
                "name": item["name"],
                "state": item.get("state", "incomplete"),
                "pos": item.get("pos", (n + 1) * 16384),
                "due": item.get("due"),
                "idMember": item.get("idMember"),
            }
            for n, item in enumerate(items)
        ]
        self.board["checklists"].append(
            {
                "id": checklist_id,
                "name": name,
                "idCard": card_id,
                "idBoard": self.board_id,
                "pos": (len(self.board["checklists"]) + 1) * 16384,
                "checkItems": check_items,
            }
        )
        self._card(card_id)["idChecklists"].append(checklist_id)
        return checklist_id

    def comment(
        self,
        card_id: str,
        text: str,
        *,
        by: str,
        at: str,
        creator: dict[str, Any] | None = None,
    ) -> str:
        """A ``commentCard`` action; actions are listed newest first, as Trello does."""
        action_id = trello_id()
        member = next((m for m in self.board["members"] if m["id"] == by), None)
        self.board["actions"].insert(
            0,
            {
                "id": action_id,
                "idMemberCreator": by,
                "type": "commentCard",
                "date": at,
                "data": {
                    "text": text,
                    "card": {"id": card_id, "name": self._card(card_id)["name"]},
                    "board": {"id": self.board_id, "name": self.name},
                },
                "memberCreator": creator or member or {"id": by},
            },
        )
        return action_id

    def moved(self, card_id: str, *, from_list: str) -> None:
        """The ``updateCard`` action Trello records when a card moves between lists."""
        card = self._card(card_id)
        self.board["actions"].insert(
            0,
            {
                "id": trello_id(),
                "type": "updateCard",
                "date": "2024-03-02T09:00:00.000Z",
                "data": {
                    "card": {"id": card_id, "idList": card["idList"]},
                    "listBefore": {"id": from_list},
                    "listAfter": {"id": card["idList"]},
                },
            },
        )

    def custom_field(self, name: str, type: str = "text") -> str:
        field_id = trello_id()
        self.board["customFields"].append(
            {"id": field_id, "idModel": self.board_id, "name": name, "type": type, "pos": 1}
        )
        return field_id

    def _card(self, card_id: str) -> dict[str, Any]:
        return next(card for card in self.board["cards"] if card["id"] == card_id)

    def data(self) -> bytes:
        return json.dumps(self.board).encode()


def generated_export(
    *, cards: int = 5000, items_per_card: int = 4, comments_per_card: int = 2
) -> TrelloExport:
    """A large board for the bench: ``cards`` cards over five lists, each with a checklist
    of ``items_per_card`` items and ``comments_per_card`` comments by three members."""
    export = TrelloExport(name="Generated board")
    people = [export.member(f"user{n}", f"User {n}") for n in range(3)]
    lists = [export.trello_list(f"List {n}") for n in range(5)]
    label = export.label("bulk", "green")
    for n in range(cards):
        card_id = export.card(
            lists[n % len(lists)],
            f"Generated card {n}",
            desc="Something to do. " * 5,
            idLabels=[label],
            idMembers=[people[n % 3]],
        )
        items = [
            {"name": f"Step {i}", "state": "complete" if i % 2 else "incomplete"}
            for i in range(items_per_card)
        ]
        export.checklist(card_id, "Steps", items)
        for c in range(comments_per_card):
            export.board["actions"].append(
                {
                    "id": trello_id(),
                    "idMemberCreator": people[c % 3],
                    "type": "commentCard",
                    "date": f"2024-01-{1 + c % 28:02d}T10:00:00.000Z",
                    "data": {"text": f"Comment {c} on card {n}", "card": {"id": card_id}},
                    "memberCreator": {"id": people[c % 3], "username": f"user{c % 3}"},
                }
            )
    return export
