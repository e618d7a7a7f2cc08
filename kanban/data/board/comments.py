"""Comments the server vouches for, on the projects that run the built-in Board.

A card's comments are one list under ``comments:<cardId>``, ``[{id, author, text, at,
edited}]``, which the Board page changes with updateValue. The page lets people edit their
own comments and owners delete any, but anyone who may write the project can store any list
there: through the REST API, MCP or a socket opened by hand. So every write of such a key,
whichever way it comes in, is checked here against the list it replaces (``kanban.data.kv``
runs the check inside its compare-and-set):

- the list is one the page shows as written (``check_comments``): objects with an id, an
  author, non-blank text of at most ``MAX_COMMENT`` characters as the page counts them, and
  ``at`` and ``edited`` times when given; no id twice; at most ``MAX_COMMENTS`` of them
  (``too_large``);
- a comment the list did not hold is its writer's: its author is the writer's username;
- a comment that changed is its author's to change, and keeps its author;
- a comment that is gone was removed by its author or by an owner.

Deleting the key deletes every comment, under the same rule. A card's checklist holds at
most ``layout.MAX_CHECKLIST`` items (``too_large``), and a guest reads the comments as they
are, not their history, which keeps every deleted comment and every earlier wording.
The caps are the page's own numbers (``layout.page_constant``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from kanban.access.memberships import role_of
from kanban.data.board import layout
from kanban.models import ROLE_RANK, Project, Role
from kanban.projects.package_changes import package_name
from storage.errors import ErrorCode, KanbanError, invalid_argument
from storage.kv import Dataset

COMMENTS_PREFIX: Final = "comments:"
MAX_COMMENTS: Final = layout.page_constant("board-comments.js", "MAX_COMMENTS")
MAX_COMMENT: Final = layout.page_constant("board-comments.js", "MAX_COMMENT")
#: The page shows at most this much of an author's name (a Django username fits).
MAX_AUTHOR: Final = 150

#: A check of the value a write replaces (None: absent); raises when it may not be replaced.
PreviousCheck = Callable[[object], None]


@dataclass(frozen=True, slots=True)
class Writer:
    username: str
    owner: bool


def _board(dataset: Dataset) -> Project | None:
    """The project behind a dataset the Board keeps its keys in (its project-scope KV), when
    the project runs the built-in Board."""
    if dataset.domain != "kv" or dataset.conversation_id is not None:
        return None
    project = Project.objects.filter(pk=dataset.project_id).only("package_json").first()
    if project is None or package_name(project.package_json) != layout.BOARD_PACKAGE:
        return None
    return project


def _writer(user: Any, project: Project) -> Writer:
    return Writer(user.get_username(), role_of(user=user, project=project) == Role.OWNER)


def board_write_check(*, user: Any, dataset: Dataset, key: str, value: Any) -> PreviousCheck | None:
    """What a write of ``value`` under ``key`` must pass on a Board project: refused at once
    when the value breaks the Board's rules alone, else the check of the value it replaces
    (None: there is none to make)."""
    if key.startswith(layout.CARD_PREFIX):
        checklist = value.get("checklist") if isinstance(value, dict) else None
        too_long = isinstance(checklist, list) and len(checklist) > layout.MAX_CHECKLIST
        if too_long and _board(dataset) is not None:
            raise KanbanError(
                ErrorCode.TOO_LARGE,
                f"a card's checklist holds at most {layout.MAX_CHECKLIST} items",
                field="value",
                limit=layout.MAX_CHECKLIST,
            )
        return None
    if not key.startswith(COMMENTS_PREFIX):
        return None
    project = _board(dataset)
    if project is None:
        return None
    comments = check_comments(value)
    writer = _writer(user, project)
    return lambda previous: check_comments_write(
        writer=writer, previous=previous, comments=comments
    )


def board_delete_check(*, user: Any, dataset: Dataset, key: str) -> PreviousCheck | None:
    """``board_write_check`` of deleting ``key``: for a comments key, removing every comment."""
    if not key.startswith(COMMENTS_PREFIX):
        return None
    return board_write_check(user=user, dataset=dataset, key=key, value=[])


def check_comments_write(
    *, writer: Writer, previous: object, comments: list[dict[str, Any]]
) -> None:
    """``comments`` (checked) may replace ``previous`` (as stored) when the writer adds only
    their own comments, changes only their own, and removes only their own, or is an owner."""
    before = {comment["id"]: comment for comment in normalize_comments(previous)}
    for comment in comments:
        old = before.pop(comment["id"], None)
        if old is None:
            if comment["author"] != writer.username:
                raise KanbanError(
                    ErrorCode.FORBIDDEN,
                    f"a new comment is its writer's: its author is {writer.username!r}",
                    field="value",
                )
        elif comment != old:
            if old["author"] != writer.username:
                raise KanbanError(
                    ErrorCode.FORBIDDEN, "only its author edits a comment", field="value"
                )
            if comment["author"] != old["author"]:
                raise KanbanError(ErrorCode.FORBIDDEN, "a comment keeps its author", field="value")
    others = [old for old in before.values() if old["author"] != writer.username]
    if others and not writer.owner:
        raise KanbanError(
            ErrorCode.FORBIDDEN, "only its author or an owner deletes a comment", field="value"
        )


def check_comments_history(*, user: Any, dataset: Dataset, key: str) -> None:
    """A guest reads a Board's comments as they are now, never their kept versions."""
    if not key.startswith(COMMENTS_PREFIX):
        return
    project = _board(dataset)
    if project is None:
        return
    role = role_of(user=user, project=project)
    if role is None or ROLE_RANK[role] < ROLE_RANK[Role.DEVELOPER]:
        raise KanbanError(
            ErrorCode.FORBIDDEN,
            "a guest reads a card's comments as they are, not their history",
            field="key",
        )


# --- the list's shape, as the page reads it (board-comments.js normalizeComments) ----------


def _units(text: str) -> int:
    """The length the page measures: UTF-16 code units (an emoji is two)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _shown(comment: object) -> dict[str, Any] | None:
    """A comment as the page shows it, or None when the page skips it."""
    if not isinstance(comment, dict) or not layout.is_id(comment.get("id")):
        return None
    author, text = comment.get("author"), comment.get("text")
    if not isinstance(author, str) or not isinstance(text, str) or not text[:MAX_COMMENT].strip():
        return None
    at, edited = comment.get("at"), comment.get("edited")
    return {
        "id": comment["id"],
        "author": author[:MAX_AUTHOR],
        "text": text[:MAX_COMMENT],
        "at": at if isinstance(at, str) else "",
        "edited": edited if isinstance(edited, str) else None,
    }


def normalize_comments(value: object) -> list[dict[str, Any]]:
    """A stored list as the page shows it: what it skips left out, the newest
    ``MAX_COMMENTS`` kept."""
    shown: list[dict[str, Any]] = []
    seen: set[str] = set()
    for comment in value if isinstance(value, list) else []:
        found = _shown(comment)
        if found is not None and found["id"] not in seen:
            seen.add(found["id"])
            shown.append(found)
    return shown[-MAX_COMMENTS:]


def check_comments(value: object) -> list[dict[str, Any]]:
    """A list the page shows exactly as written, as the page shows it; a comment it would
    skip or cut is refused, never dropped."""
    listed = layout.check_list(
        value,
        limit=MAX_COMMENTS,
        field="value",
        not_a_list="a card's comments are a list of comments",
        too_many=f"a card holds at most {MAX_COMMENTS} comments",
    )
    comments: list[dict[str, Any]] = []
    seen: set[str] = set()
    for position, comment in enumerate(listed):
        shown = _shown(comment)
        if (
            shown is None
            or not isinstance(comment, dict)
            or not isinstance(comment.get("at", ""), str)
            or not isinstance(comment.get("edited", ""), str | None)
            or not 0 < len(comment["author"]) <= MAX_AUTHOR
        ):
            raise invalid_argument(
                f"comment {position} is not {{id, author, text, at, edited}} as the Board "
                "keeps it (an id of letters, digits, _ and -; an author; text that is not "
                "blank; at a time; edited a time or null)",
                field="value",
            )
        if _units(comment["text"]) > MAX_COMMENT:
            raise invalid_argument(
                f"comment {position} is longer than {MAX_COMMENT} characters", field="value"
            )
        if shown["id"] in seen:
            raise invalid_argument(
                f"comment {position} repeats the id {shown['id']!r}", field="value"
            )
        seen.add(shown["id"])
        comments.append(shown)
    return comments


# --- a comment added, as the page's addComment adds it -------------------------------------


def check_comment_text(value: object) -> str:
    return layout.check_shown_text(
        value, needs="a comment needs some text", named="a comment", limit=MAX_COMMENT, units=_units
    )


def comment_added(previous: object, comment: dict[str, Any]) -> list[dict[str, Any]]:
    """The list as stored now, as the page shows it, with ``comment`` (checked) last."""
    return layout.appended(
        normalize_comments(previous),
        comment,
        limit=MAX_COMMENTS,
        too_many=f"a card holds at most {MAX_COMMENTS} comments",
    )


def comment_changed(previous: object, comment_id: str, text: str | None, at: str) -> Any:
    """The list as stored now with one comment's text edited at ``at`` (text None: the
    comment removed). Who may is decided where every write of the list is
    (``check_comments_write``): its author edits, its author or an owner removes."""
    listed = normalize_comments(previous)
    if comment_id not in {comment["id"] for comment in listed}:
        raise KanbanError(
            ErrorCode.NOT_FOUND, f"no comment {comment_id!r} on this card", field="comment"
        )
    if text is None:
        return [comment for comment in listed if comment["id"] != comment_id]
    return [
        {**comment, "text": text, "edited": at} if comment["id"] == comment_id else comment
        for comment in listed
    ]
