"""What every domain's action table shares (``kv_action``, ``knowledge_action``,
``board_action``): how a call finds its action, and how an action asks for an argument it
cannot do without. One wording of both refusals, whichever way in a call came."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from storage.errors import invalid_argument

Handler = TypeVar("Handler")


def action_in(table: Mapping[str, Handler], action: object, *, of: str) -> Handler:
    """The handler of ``action`` in ``of``'s table (``of`` names the table to the caller:
    ``kv``, ``knowledge``, ``board_cards``); an unknown one is refused naming those there are."""
    run = table.get(action) if isinstance(action, str) else None
    if run is None:
        raise invalid_argument(
            f"unknown {of} action {action!r}: one of {', '.join(table)}", field="action"
        )
    return run


def needed(arguments: Mapping[str, Any], name: str, *, action: str, allow_null: bool = True) -> Any:
    """The argument ``name`` of ``action``, which must be given: a JSON null is a value
    given (a value to set may be null) unless ``allow_null`` is false (a key may not)."""
    if name not in arguments or (not allow_null and arguments[name] is None):
        raise invalid_argument(f"{action} needs {name!r}", field=name)
    return arguments[name]
