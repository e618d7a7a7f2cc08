"""Search across boards: the cards, on every built-in Board a person can read, whose title,
description or comments hold every word of the query (any case), each with a link to open
it. Server-side, read through the one access decision like any other read, and bounded like
a Knowledge search: one of the person's ``KANBAN_SEARCHES_PER_USER`` slots, and at most
``KANBAN_SEARCH_BUDGET_CHARS`` of JSON read before it stops with ``too_large``.

Boards are searched by name, cards in index order; a page is ``limit`` results, and its
cursor says how many came before (the next page searches again and skips them).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

from django.conf import settings

from kanban.data.board import layout
from kanban.data.board.comments import COMMENTS_PREFIX, normalize_comments
from kanban.data.knowledge import search_slot
from kanban.data.kv import project_kv_get, project_kv_get_many
from kanban.data.target import Target
from kanban.models import Project, ProjectType
from kanban.projects.package_changes import package_name
from storage import jsoncodec
from storage.addresses import PLAIN_TEXT
from storage.errors import ErrorCode, KanbanError, invalid_argument
from storage.limits import MAX_BATCH_KEYS

MAX_QUERY: Final = 200
DEFAULT_LIMIT: Final = 20
#: How far into the results a cursor may point.
MAX_CURSOR: Final = 10**6
MAX_LIMIT: Final = 50
EXCERPT: Final = 160


@dataclass
class _Budget:
    left: int

    def spend(self, value: Any) -> None:
        self.left -= len(jsoncodec.encode(value))
        if self.left < 0:
            raise KanbanError(
                ErrorCode.TOO_LARGE,
                f"this search read its budget of {settings.KANBAN_SEARCH_BUDGET_CHARS} "
                "characters of cards before it finished; add a word to narrow it",
                budgetChars=settings.KANBAN_SEARCH_BUDGET_CHARS,
            )


def check_query(raw: object) -> list[str]:
    if not isinstance(raw, str) or not raw.strip() or len(raw) > MAX_QUERY:
        raise invalid_argument(f"q is 1 to {MAX_QUERY} characters", field="q")
    if not PLAIN_TEXT.fullmatch(raw):
        raise invalid_argument("q has no control characters", field="q")
    return raw.casefold().split()


def _whole(raw: object, *, field: str, low: int, high: int) -> int:
    if type(raw) is not int or not low <= raw <= high:
        raise invalid_argument(f"{field} is a whole number from {low} to {high}", field=field)
    return raw


def cards_search(
    *,
    user: Any,
    query: object,
    limit: object = DEFAULT_LIMIT,
    cursor: object = 0,
    boards: Collection[UUID] | None = None,
) -> dict[str, Any]:
    """``{results: [{board: {id, name}, card: {id, title, column, archived}, matched,
    excerpt, url}], cursor}``; ``matched`` is where the first word was found ("title",
    "description" or "comment"). ``boards``: only these (a token's), else every one the
    person can read."""
    words = check_query(query)
    size = _whole(limit, field="limit", low=1, high=MAX_LIMIT)
    start = _whole(cursor, field="cursor", low=0, high=MAX_CURSOR)
    skip = start
    budget = _Budget(int(settings.KANBAN_SEARCH_BUDGET_CHARS))
    results: list[dict[str, Any]] = []
    with search_slot(user.pk):
        for found in _matches(user, words, budget, boards):
            if skip:
                skip -= 1
                continue
            if len(results) == size:
                return {"results": results, "cursor": start + size}
            results.append(found)
    return {"results": results, "cursor": None}


def _boards(user: Any, only: Collection[UUID] | None) -> list[Project]:
    boards = Project.objects.filter(archived_at=None, type=ProjectType.KANBAN)
    if only is not None:
        boards = boards.filter(pk__in=list(only))
    if not getattr(user, "is_superuser", False):
        boards = boards.filter(memberships__user_id=user.pk)
    return [
        board
        for board in boards.order_by("name", "id").distinct()
        if package_name(board.package_json) == layout.BOARD_PACKAGE
    ]


def _read_many(user: Any, board: Project, keys: list[str], budget: _Budget) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for start in range(0, len(keys), MAX_BATCH_KEYS):
        batch = keys[start : start + MAX_BATCH_KEYS]
        read = project_kv_get_many(target=Target(user=user, project_id=board.id), keys=batch)
        for key, item in zip(batch, read, strict=True):
            if isinstance(item, KanbanError):
                if item.code != ErrorCode.TOO_LARGE:
                    continue  # a key the read rule hides stays hidden
                item = project_kv_get(target=Target(user=user, project_id=board.id), key=key)
            if item is not None:
                budget.spend(item.value)
                values[key] = item.value
    return values


def _matches(
    user: Any, words: list[str], budget: _Budget, only: Collection[UUID] | None
) -> Iterator[dict[str, Any]]:
    for board in _boards(user, only):
        try:
            index = project_kv_get(
                target=Target(user=user, project_id=board.id), key=layout.INDEX_KEY
            )
        except KanbanError:
            continue  # this board's cards are not readable to them
        ids = layout.normalize_index(None if index is None else index.value)
        cards = _read_many(user, board, [layout.card_key(i) for i in ids], budget)
        comments = _read_many(user, board, [COMMENTS_PREFIX + i for i in ids], budget)
        for card_id in ids:
            card = layout.normalize_card(card_id, cards.get(layout.card_key(card_id)))
            if card is None:
                continue
            texts = _comment_texts(comments.get(COMMENTS_PREFIX + card_id))
            found = _match(words, card, texts)
            if found is not None:
                matched, excerpt = found
                yield {
                    "board": {"id": str(board.id), "name": board.name},
                    "card": {
                        "id": card_id,
                        "title": card["title"],
                        "column": card["column"],
                        "archived": card["archived"],
                    },
                    "matched": matched,
                    "excerpt": excerpt,
                    "url": f"/boards/{board.id}/#card={card_id}",
                }


def _comment_texts(value: Any) -> list[str]:
    """The comments the card's dialog shows, and no entry it skips."""
    return [comment["text"] for comment in normalize_comments(value)]


def _match(words: list[str], card: dict[str, Any], comments: list[str]) -> tuple[str, str] | None:
    fields = [("title", card["title"]), ("description", card["description"])]
    fields += [("comment", text) for text in comments]
    haystack = "\n".join(text for _, text in fields).casefold()
    if not all(word in haystack for word in words):
        return None
    for name, text in fields:
        at = text.casefold().find(words[0])
        if at >= 0:
            start = max(0, at - EXCERPT // 3)
            excerpt = text[start : start + EXCERPT]
            return name, ("…" if start else "") + excerpt
    return "title", card["title"]
