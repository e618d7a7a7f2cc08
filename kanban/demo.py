"""Development demo data: three people, the Board and Inventory plugins with their
confirmed relationship, and a few sample cards. Never in production mode."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from kanban.kv import Origin, project_kv_set
from kanban.memberships import membership_set
from kanban.packages import project_import
from storage import engine
from storage.errors import ErrorCode, KanbanError
from storage.namespaces import demo_marker
from storage.writes import set_value

PLUGINS = Path(settings.BASE_DIR) / "bridge_js" / "plugins"
#: (username, role on both projects, superuser)
PEOPLE = (("alice", "owner", True), ("bob", "developer", False), ("carol", "guest", False))

COLUMNS = [
    {"id": "todo", "title": "To do", "wip": 0},
    {"id": "doing", "title": "Doing", "wip": 3},
    {"id": "done", "title": "Done", "wip": 0},
]
CARDS = [
    ("c1", "todo", "Write the onboarding guide", "alice", ["docs"], None),
    ("c2", "todo", "Order M6 bolts", "bob", ["purchasing"], "bolt-m6"),
    ("c3", "doing", "Fix the login redirect", "bob", ["bug"], None),
    ("c4", "doing", "Assemble shelf prototype", "carol", ["hardware"], "shelf-bracket"),
    ("c5", "done", "Set up the board", "alice", [], None),
]
STOCK = {"bolt-m6": ("M6 bolt", 120), "shelf-bracket": ("Shelf bracket", 8), "hinge": ("Hinge", 24)}


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str
    role: str


def demo_is_loaded() -> bool:
    return engine.get_value(demo_marker()) is not None


def demo_load() -> list[DemoLogin]:
    """Load the demo into an empty database; returns the logins created (passwords are
    shown once, never stored). A database with any user or the demo already is left alone."""
    if settings.PRODUCTION:
        raise KanbanError(ErrorCode.FORBIDDEN, "demo data is for development only")
    user_model = get_user_model()
    if user_model.objects.exists() or demo_is_loaded():
        return []
    logins = []
    with transaction.atomic():
        board = project_import(path=PLUGINS / "board")
        inventory = project_import(path=PLUGINS / "inventory")
        users = {}
        for username, role, superuser in PEOPLE:
            password = f"{username}-{secrets.token_urlsafe(6)}"
            user = user_model.objects.create_user(
                username, password=password, is_staff=superuser, is_superuser=superuser
            )
            users[username] = user
            for project in (board, inventory):
                membership_set(user=user, project=project, role=role)
            logins.append(DemoLogin(username, password, role))
        _cards(user=users["alice"], board_id=board.id, inventory_id=inventory.id)
        engine.commit([set_value(demo_marker(), {"boardId": str(board.id)})])
    return logins


def _cards(*, user: Any, board_id: Any, inventory_id: Any) -> None:
    origin = Origin(via="cli")

    def put(project_id: Any, key: str, value: Any) -> None:
        project_kv_set(user=user, project_id=project_id, key=key, value=value, origin=origin)

    put(board_id, "board:columns", COLUMNS)
    put(board_id, "board:cards", [card[0] for card in CARDS])
    for rank, (card_id, column, title, assignee, labels, item) in enumerate(CARDS):
        card = {
            "id": card_id,
            "title": title,
            "description": "",
            "assignee": assignee,
            "labels": labels,
            "due": None,
            "column": column,
            "rank": rank + 1,
        }
        if item:
            card["item"] = item
        put(board_id, f"card:{card_id}", card)
    put(inventory_id, "items", list(STOCK))
    for item, (name, count) in STOCK.items():
        put(inventory_id, f"stock:{item}", {"name": name, "count": count})
