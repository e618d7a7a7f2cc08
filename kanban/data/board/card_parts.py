"""board_cards actions on the parts of a card a person changes in its dialog: comments
(add; edit and delete, as the server's comment rules allow) and checklist items (add, tick,
rename, reorder, remove). The rules are the Board's own (``comments``,
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
    said = new_comment(call, text)
    listed = _comments_changed(call, card_id, lambda now: comments.comment_added(now, said))
    return {"comment": said, "commentCount": len(listed)}


def new_comment(call: Call, text: str) -> dict[str, Any]:
    """A comment by the caller (``text`` checked), as the page makes one."""
    return {
        "id": layout.new_id(),
        "author": call.user.get_username(),
        "text": text,
        "at": _now(),
        "edited": None,
    }


def comment_edit(call: Call) -> Any:
    card_id, comment_id = call.card_id(), _comment_id(call)
    text, at = comments.check_comment_text(call.arguments.get("text")), _now()
    listed = _comments_changed(
        call, card_id, lambda now: comments.comment_changed(now, comment_id, text, at)
    )
    edited = next(c for c in listed if c["id"] == comment_id)
    return {"comment": edited, "commentCount": len(listed)}


def comment_delete(call: Call) -> Any:
    card_id, comment_id = call.card_id(), _comment_id(call)
    listed = _comments_changed(
        call, card_id, lambda now: comments.comment_changed(now, comment_id, None, "")
    )
    return {"deleted": comment_id, "commentCount": len(listed)}


def _now() -> str:
    # The page's own time format (toISOString), so both read every comment alike.
    return timezone.now().isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _comment_id(call: Call) -> str:
    return call.id_of("comment", "a comment's id")


def _comments_changed(
    call: Call, card_id: str, change: Callable[[object], list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The card's comments changed over what is stored now, then the count on its face."""
    call.read_card(card_id)  # not_found before anything is written
    key = comments.COMMENTS_PREFIX + card_id
    written: list[list[dict[str, Any]]] = []

    def write() -> None:
        entry = call.get(key)
        listed = change(None if entry is None else entry.value)
        call.set(key, listed, None if entry is None else entry.revision)
        written.append(listed)

    retrying(write)
    count = len(written[-1])

    def face() -> None:
        card, entry = call.read_card(card_id)
        if card["commentCount"] != count:
            stored = {**entry.value, "commentCount": count}
            call.set(layout.card_key(card_id), stored, entry.revision)

    retrying(face)
    return written[-1]


def checklist_add(call: Call) -> Any:
    card_id = call.card_id()
    text = layout.check_item_text(call.arguments.get("text"))
    item = {"id": layout.new_id(), "text": text, "done": False}
    return _changed(call, card_id, lambda card: layout.checklist_item_added(card, item))


def checklist_tick(call: Call) -> Any:
    card_id, item_id = call.card_id(), _item_id(call)
    done = call.arguments.get("done")
    if not isinstance(done, bool):
        raise invalid_argument("done is true (ticked) or false", field="done")
    return _item_changed(call, card_id, item_id, {"done": done})


def checklist_rename(call: Call) -> Any:
    card_id, item_id = call.card_id(), _item_id(call)
    text = layout.check_item_text(call.arguments.get("text"))
    return _item_changed(call, card_id, item_id, {"text": text})


def checklist_reorder(call: Call) -> Any:
    card_id, item_id = call.card_id(), _item_id(call)
    position = layout.check_position(call.arguments.get("position"))
    return _changed(
        call, card_id, lambda card: layout.checklist_item_moved(card, item_id, position)
    )


def checklist_remove(call: Call) -> Any:
    card_id, item_id = call.card_id(), _item_id(call)
    return _item_changed(call, card_id, item_id, None)


def _item_id(call: Call) -> str:
    return call.id_of("item", "a checklist item's id")


def _item_changed(
    call: Call, card_id: str, item_id: str, change: dict[str, Any] | None
) -> dict[str, Any]:
    return _changed(
        call, card_id, lambda card: layout.checklist_item_changed(card, item_id, change)
    )


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
