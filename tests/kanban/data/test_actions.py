"""The three action tables (KV, Knowledge, the Board's cards) refuse an unknown action and a
missing argument in one wording, whichever table a call reaches."""

from __future__ import annotations

import pytest

from kanban.data.board.cards import board_action
from kanban.data.knowledge import knowledge_action
from kanban.data.kv import Provenance, kv_action
from kanban.data.target import Target
from storage.errors import ErrorCode, KanbanError
from tests.factories import a_board, a_user

pytestmark = pytest.mark.django_db

AGENT = Provenance("mcp")


def test_an_unknown_action_is_refused_naming_the_actions_each_table_has() -> None:
    alice = a_user("alice")
    board = a_board(owner=alice)
    calls = {
        "kv": lambda: kv_action(
            action="list", target=Target(alice, board.id), arguments={}, provenance=AGENT
        ),
        "knowledge": lambda: knowledge_action(
            action="list_all",
            target=Target(alice, board.id),
            document_id=None,
            arguments={},
            provenance=AGENT,
        ),
        "board_cards": lambda: board_action(
            action="remove", user=alice, project_id=board.id, arguments={}, provenance=AGENT
        ),
    }
    said = {}
    for table, call in calls.items():
        with pytest.raises(KanbanError) as refused:
            call()
        assert refused.value.code == ErrorCode.INVALID_ARGUMENT
        assert refused.value.details == {"field": "action"}
        said[table] = refused.value.message

    assert said == {
        "kv": "unknown kv action 'list': one of get, entry, getMany, set, delete, history",
        "knowledge": "unknown knowledge action 'list_all': one of list, get, create, edit, "
        "delete, search, read_lines",
        "board_cards": "unknown board_cards action 'remove': one of list, get, add, update, "
        "move, archive, restore, comment, comment_edit, comment_delete, checklist_add, "
        "checklist_tick, checklist_rename, checklist_reorder, checklist_remove, column_add, "
        "column_update, column_reorder, history, restore_version, labels, label_add, "
        "label_update, label_remove, copy_to_board, move_to_board, search",
    }


def test_a_missing_argument_is_named_and_a_null_value_is_a_value_but_a_null_key_is_not() -> None:
    alice = a_user("alice")
    board = a_board(owner=alice)

    def kv(arguments: dict[str, object]) -> object:
        return kv_action(
            action="set", target=Target(alice, board.id), arguments=arguments, provenance=AGENT
        )

    for arguments, missing in (({"key": "k"}, "value"), ({"key": None, "value": 1}, "key")):
        with pytest.raises(KanbanError) as refused:
            kv(arguments)
        assert refused.value.code == ErrorCode.INVALID_ARGUMENT
        assert refused.value.message == f"set needs {missing!r}"
        assert refused.value.details == {"field": missing}
    assert kv({"key": "k", "value": None})["revision"]  # type: ignore[index]

    with pytest.raises(KanbanError) as refused:
        knowledge_action(
            action="create",
            target=Target(alice, board.id),
            document_id=None,
            arguments={"title": "Runbook", "markdown": None},
            provenance=AGENT,
        )
    assert refused.value.message == "create needs 'markdown'"
