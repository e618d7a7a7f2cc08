"""A large Trello board export for the bench, in the shape Trello's "Export as JSON" writes
(the board object with ``lists``, ``cards``, ``labels``, ``checklists``, ``members``,
``memberships``, ``customFields``, ``actions``, ``pluginData`` and ``prefs``), made in one
pass so a 60 MB export takes a second, not minutes."""

from __future__ import annotations

import itertools
import json
import os
from typing import Any

COLOURS = ("green", "yellow", "orange", "red", "purple", "blue", "sky", "lime", "pink", "black")


def export_bytes(
    *, cards: int, items: int, comments: int, description_bytes: int = 100, lists: int = 5
) -> bytes:
    """``cards`` cards over ``lists`` lists, ``items`` checklist items and ``comments``
    ``commentCard`` actions spread over them (by three members), each card's description
    ``description_bytes`` long (the knob for the file's size)."""
    # A board of its own each time: an import of the same Trello board would update the
    # board an earlier run made (another person's, refused).
    ids = itertools.count(int.from_bytes(os.urandom(8)) << 32)

    def new_id() -> str:
        return f"{next(ids):024x}"

    board_id = new_id()
    members = [
        {"id": new_id(), "username": f"bench_user{n}", "fullName": f"Bench User {n}"}
        for n in range(3)
    ]
    the_lists = [
        {"id": new_id(), "name": f"List {n}", "closed": False, "pos": (n + 1) * 16384}
        for n in range(lists)
    ]
    labels = [{"id": new_id(), "name": f"Label {c}", "color": c} for c in COLOURS]
    text = ("Something to do, with detail. " * (description_bytes // 30 + 1))[:description_bytes]
    the_cards: list[dict[str, Any]] = []
    checklists: list[dict[str, Any]] = []
    actions: list[dict[str, Any]] = []
    for n in range(cards):
        card_id = new_id()
        card_items = items // cards + (1 if n < items % cards else 0)
        checklist_ids = []
        if card_items:
            checklist_id = new_id()
            checklist_ids.append(checklist_id)
            checklists.append(
                {
                    "id": checklist_id,
                    "name": "Steps",
                    "idCard": card_id,
                    "idBoard": board_id,
                    "pos": 16384,
                    "checkItems": [
                        {
                            "id": new_id(),
                            "idChecklist": checklist_id,
                            "name": f"Step {i} of card {n}",
                            "state": "complete" if i % 2 else "incomplete",
                            "pos": (i + 1) * 16384,
                            "due": None,
                            "idMember": None,
                        }
                        for i in range(card_items)
                    ],
                }
            )
        the_cards.append(
            {
                "id": card_id,
                "name": f"Generated card {n}",
                "desc": text,
                "closed": n % 50 == 49,
                "idList": the_lists[n % lists]["id"],
                "idBoard": board_id,
                "pos": (n + 1) * 16384,
                "due": "2025-06-01T12:00:00.000Z" if n % 7 == 0 else None,
                "start": None,
                "dueComplete": False,
                "idLabels": [labels[n % len(labels)]["id"]],
                "idMembers": [members[n % 3]["id"]],
                "idChecklists": checklist_ids,
                "attachments": [],
                "customFieldItems": [],
                "pluginData": [],
                "url": f"https://trello.com/c/{card_id[-8:]}",
            }
        )
        card_comments = comments // cards + (1 if n < comments % cards else 0)
        for c in range(card_comments):
            author = members[(n + c) % 3]
            actions.append(
                {
                    "id": new_id(),
                    "idMemberCreator": author["id"],
                    "type": "commentCard",
                    "date": f"2024-01-{1 + c % 28:02d}T10:{c % 60:02d}:00.000Z",
                    "data": {
                        "text": f"Comment {c} on card {n} 🎉",
                        "card": {"id": card_id, "name": f"Generated card {n}"},
                        "board": {"id": board_id, "name": "Generated board"},
                    },
                    "memberCreator": author,
                }
            )
    actions.reverse()  # Trello lists actions newest first
    board = {
        "id": board_id,
        "name": "Generated board",
        "desc": "",
        "closed": False,
        "url": f"https://trello.com/b/{board_id[-8:]}/generated-board",
        "prefs": {"permissionLevel": "private", "background": "blue"},
        "labelNames": {},
        "lists": the_lists,
        "cards": the_cards,
        "labels": labels,
        "checklists": checklists,
        "members": members,
        "memberships": [
            {"id": new_id(), "idMember": m["id"], "memberType": "normal"} for m in members
        ],
        "customFields": [],
        "actions": actions,
        "pluginData": [],
    }
    return json.dumps(board, ensure_ascii=False).encode()
