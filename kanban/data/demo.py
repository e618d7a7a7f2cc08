"""Development demo data: three people, the Board and Inventory plugins with their
confirmed relationship, and a few sample cards. Never in production mode."""

from __future__ import annotations

import itertools
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from kanban.access.memberships import membership_set
from kanban.data.kv import Provenance, project_kv_get, project_kv_set
from kanban.data.target import Target
from kanban.projects.packages import project_import
from storage import engine
from storage.errors import ErrorCode, KanbanError
from storage.namespaces import demo_marker, project_kv
from storage.writes import set_value

PLUGINS = Path(settings.BASE_DIR) / "bridge_js" / "plugins"
#: (username, role on both projects, superuser)
#: (username, full name, role on both projects, superuser)
PEOPLE = (
    ("alice", "Alice Martin", "owner", True),
    ("bob", "Bob Okafor", "developer", False),
    ("carol", "Carol Diaz", "guest", False),
)

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
        for username, name, role, superuser in PEOPLE:
            password = f"{username}-{secrets.token_urlsafe(6)}"
            first, last = name.split(" ", 1)
            user = user_model.objects.create_user(
                username,
                password=password,
                first_name=first,
                last_name=last,
                is_staff=superuser,
                is_superuser=superuser,
            )
            users[username] = user
            for project in (board, inventory):
                membership_set(user=user, project=project, role=role)
            logins.append(DemoLogin(username, password, role))
        _cards(user=users["alice"], board_id=board.id, inventory_id=inventory.id)
        engine.commit([set_value(demo_marker(), {"boardId": str(board.id)})])
    return logins


def _cards(*, user: Any, board_id: Any, inventory_id: Any) -> None:
    provenance = Provenance(via="cli")

    def put(project_id: Any, key: str, value: Any) -> None:
        project_kv_set(
            target=Target(user=user, project_id=project_id),
            key=key,
            value=value,
            provenance=provenance,
        )

    put(board_id, "board:columns", COLUMNS)
    put(board_id, "board:cards", [card[0] for card in CARDS])
    ranks = demo_ranks(len(CARDS))
    for rank, (card_id, column, title, assignee, labels, item) in zip(ranks, CARDS, strict=True):
        card = {
            "id": card_id,
            "title": title,
            "description": "",
            "assignee": assignee,
            "assignees": [assignee],
            "labels": labels,
            "due": None,
            "column": column,
            "rank": rank,
        }
        if item:
            card["item"] = item
        put(board_id, f"card:{card_id}", card)
    put(inventory_id, "items", list(STOCK))
    for item, (name, count) in STOCK.items():
        put(inventory_id, f"stock:{item}", {"name": name, "count": count})


_RANK_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def demo_ranks(count: int) -> list[str]:
    """``count`` evenly spaced Board ranks, ascending: base-36 fractions written without
    "0." and trailing zeros, as bridge_js/plugins/board/board-core.js reads them. Evenly
    spaced, so a card can be placed between any two by keyboard or drag."""
    width = 1
    while 36**width <= count * 36:
        width += 1
    ranks = []
    for n in range(1, count + 1):
        value = n * 36**width // (count + 1)
        digits = ""
        for _ in range(width):
            value, digit = divmod(value, 36)
            digits = _RANK_DIGITS[digit] + digits
        ranks.append(digits.rstrip("0"))
    return ranks


def demo_board_fill(*, cards: int) -> int:
    """Give the demo Board ``cards`` cards in all (generated ones added after the demo's
    own, spread over its columns), every card re-ranked evenly, in one transaction. Loads
    the demo first on an empty database. Returns how many cards were added."""
    demo_load()
    marker = engine.get_value(demo_marker())
    if marker is None:
        raise KanbanError(ErrorCode.NOT_FOUND, "this database has users but no demo Board")
    alice = get_user_model().objects.get(username="alice")
    return board_fill(project_id=UUID(marker.value["boardId"]), cards=cards, user=alice)


def board_fill(*, project_id: UUID, cards: int, user: Any) -> int:
    """Give a Board project ``cards`` cards in all, as ``demo_board_fill`` says; ``user``
    (who must be able to read it) is recorded as the writer. The bench uses it too."""
    board_id = project_id
    alice = user
    index = project_kv_get(target=Target(user=alice, project_id=board_id), key="board:cards")
    # Once, without the twice-listed ids a fill before the one below could leave.
    ids: list[str] = list(dict.fromkeys(index.value)) if index is not None else []
    # New ids past the ones a fill before this one gave: g00000 may be taken already.
    taken = set(ids)
    fresh = (card_id for n in itertools.count() if (card_id := f"g{n:05d}") not in taken)
    added = list(itertools.islice(fresh, max(0, cards - len(ids))))
    columns = [column["id"] for column in COLUMNS]
    stored = {
        card_id: entry.value
        for card_id in ids
        if (
            entry := project_kv_get(
                target=Target(user=alice, project_id=board_id), key=f"card:{card_id}"
            )
        )
    }
    for n, card_id in enumerate(added):
        stored[card_id] = {
            "id": card_id,
            "title": f"Generated card {n + 1}",
            "description": "",
            "assignee": PEOPLE[n % len(PEOPLE)][0],
            "labels": [],
            "due": None,
            "column": columns[n % len(columns)],
        }
    all_ids = ids + added
    for column in columns:
        in_column = [
            card_id for card_id in all_ids if stored.get(card_id, {}).get("column") == column
        ]
        for card_id, rank in zip(in_column, demo_ranks(len(in_column)), strict=True):
            stored[card_id] = {**stored[card_id], "rank": rank}
    source = {
        "user": alice.get_username(),
        "userId": alice.pk,
        "via": "cli",
        "consumerProject": str(board_id),
    }
    writes = [set_value(project_kv(board_id, "board:cards"), all_ids, source=source)]
    if project_kv_get(target=Target(user=alice, project_id=board_id), key="board:columns") is None:
        writes.append(set_value(project_kv(board_id, "board:columns"), COLUMNS, source=source))
    writes += [
        set_value(project_kv(board_id, f"card:{card_id}"), card, source=source)
        for card_id, card in stored.items()
    ]
    engine.commit(writes)
    return len(added)
