"""board_cards actions on the parts of a card a person changes in its dialog: a comment
added, a checklist item added or ticked. The rules are the Board's own (``comments``,
``layout``); each write is a compare-and-set on the value as stored now, retried when it
lost a race, so what a person wrote meanwhile stands."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from kanban.data.board import comments, layout
from kanban.data.board.races import retrying
from storage.errors import invalid_argument

if TYPE_CHECKING:
    from kanban.data.board.cards import Call


def comment(call: Call) -> Any:
    """A comment by the caller, then the count on the card's face, as the page sets it."""
    card_id = call.card_id()
    text = comments.check_comment_text(call.arguments.get("text"))
    call.read_card(card_id)  # not_found before anything is written
    # The page's own time format (toISOString), so both read every comment alike.
    at = timezone.now().isoformat(timespec="milliseconds").replace("+00:00", "Z")
    said = {"id": layout.new_id(), "author": call.user.get_username(), "text": text, "at": at}
    said["edited"] = None
    key = comments.COMMENTS_PREFIX + card_id
    count: list[int] = []

    def write() -> None:
        entry = call.get(key)
        listed = comments.comment_added(None if entry is None else entry.value, said)
        call.set(key, listed, None if entry is None else entry.revision)
        count.append(len(listed))

    retrying(write)

    def face() -> None:
        card, entry = call.read_card(card_id)
        if card["commentCount"] != count[-1]:
            stored = {**entry.value, "commentCount": count[-1]}
            call.set(layout.card_key(card_id), stored, entry.revision)

    retrying(face)
    return {"comment": said, "commentCount": count[-1]}


def checklist_add(call: Call) -> Any:
    card_id = call.card_id()
    text = layout.check_item_text(call.arguments.get("text"))
    item = {"id": layout.new_id(), "text": text, "done": False}
    return _changed(call, card_id, lambda card: layout.checklist_item_added(card, item))


def checklist_tick(call: Call) -> Any:
    card_id = call.card_id()
    item_id, done = call.arguments.get("item"), call.arguments.get("done")
    if not layout.is_id(item_id):
        raise invalid_argument("item must be a checklist item's id", field="item")
    if not isinstance(done, bool):
        raise invalid_argument("done is true (ticked) or false", field="done")
    checked = str(item_id)
    return _changed(call, card_id, lambda card: layout.checklist_item_ticked(card, checked, done))


def _changed(
    call: Call, card_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    result: dict[str, Any] = {}

    def write() -> None:
        _, entry = call.read_card(card_id)
        stored = change(entry.value)
        result["revision"] = call.set(layout.card_key(card_id), stored, entry.revision)
        result["card"] = layout.normalize_card(card_id, stored)

    retrying(write)
    return {**result["card"], "revision": result["revision"]}
