"""Named configurations as services: each person's own saved views of a board, one active,
the built-in default when none is, and nobody ever sees anyone else's."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, connections, transaction

from kanban.access.memberships import membership_set
from kanban.data.configurations import (
    MAX_CONFIGURATIONS,
    MAX_VALUES_BYTES,
    NamedConfiguration,
    configuration_activate,
    configuration_active,
    configuration_create,
    configuration_delete,
    configuration_duplicate,
    configuration_get,
    configuration_list,
    configuration_update,
)
from kanban.models import Configuration, Project
from storage.errors import ErrorCode, KanbanError
from tests.factories import a_project, a_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def board(alice: Any, bob: Any, charlie: Any) -> Project:
    """Alice owns the board, bob develops on it, charlie is a guest."""
    return a_project(name="Roadmap", owner=alice, members={bob: "developer", charlie: "guest"})


def names(user: Any, board: Project) -> list[str]:
    return [item.name for item in configuration_list(user=user, project_id=board.id)]


def active_of(user: Any, board: Project) -> NamedConfiguration:
    return configuration_active(user=user, project_id=board.id)


def refusal(call: Any, **kwargs: Any) -> KanbanError:
    with pytest.raises(KanbanError) as caught:
        call(**kwargs)
    return caught.value


# --- the default and the basic lifecycle -----------------------------------------------------


def test_a_new_user_has_only_the_active_default(alice: Any, board: Project) -> None:
    (default,) = configuration_list(user=alice, project_id=board.id)
    assert default == NamedConfiguration(id="", name="Default", values={}, active=True)
    assert default.for_bridge() == {"id": "", "name": "Default", "values": {}}
    assert active_of(alice, board) == default
    assert configuration_get(user=alice, project_id=board.id, configuration_id="") == default
    assert not Configuration.objects.exists()


def test_alice_creates_configurations_that_list_by_name_after_the_default(
    alice: Any, board: Project
) -> None:
    sprint = configuration_create(
        user=alice, project_id=board.id, name="  sprint  ", values={"z": 1, "a": [1.0, None]}
    )
    configuration_create(user=alice, project_id=board.id, name="Backlog")
    assert uuid.UUID(sprint.id)
    assert sprint.name == "sprint"
    assert sprint.active is False
    assert sprint.created_at is not None and sprint.created_at.tzinfo is not None
    assert names(alice, board) == ["Default", "Backlog", "sprint"]
    got = configuration_get(user=alice, project_id=board.id, configuration_id=sprint.id)
    assert got.values == {"z": 1, "a": [1.0, None]}
    assert list(got.values) == ["z", "a"]  # key order survives on every backend
    assert isinstance(got.values["a"][0], float)
    backlog = configuration_list(user=alice, project_id=board.id)[1]
    assert backlog.values == {}


def test_alice_renames_and_changes_values(alice: Any, board: Project) -> None:
    made = configuration_create(user=alice, project_id=board.id, name="Mine", values={"wip": 1})
    renamed = configuration_update(
        user=alice, project_id=board.id, configuration_id=made.id, name="Team view"
    )
    assert (renamed.name, renamed.values) == ("Team view", {"wip": 1})
    changed = configuration_update(
        user=alice, project_id=board.id, configuration_id=made.id, values={"wip": 3}
    )
    assert (changed.name, changed.values) == ("Team view", {"wip": 3})
    both = configuration_update(
        user=alice, project_id=board.id, configuration_id=made.id, name="Final", values={}
    )
    assert (both.name, both.values) == ("Final", {})
    assert both.updated_at is not None and made.updated_at is not None
    assert both.updated_at >= made.updated_at
    assert names(alice, board) == ["Default", "Final"]


def test_an_update_that_changes_nothing_is_accepted(alice: Any, board: Project) -> None:
    made = configuration_create(user=alice, project_id=board.id, name="Mine", values={"a": 1})
    same = configuration_update(
        user=alice, project_id=board.id, configuration_id=made.id, name="Mine", values={"a": 1}
    )
    untouched = configuration_update(user=alice, project_id=board.id, configuration_id=made.id)
    assert same == untouched == made


def test_names_are_unique_per_person_and_board(alice: Any, bob: Any, board: Project) -> None:
    configuration_create(user=alice, project_id=board.id, name="Mine")
    taken = refusal(configuration_create, user=alice, project_id=board.id, name=" Mine ")
    assert taken.code == ErrorCode.CONFLICT
    assert taken.details == {"field": "name"}
    other = configuration_create(user=alice, project_id=board.id, name="Other")
    clash = refusal(
        configuration_update,
        user=alice,
        project_id=board.id,
        configuration_id=other.id,
        name="Mine",
    )
    assert clash.code == ErrorCode.CONFLICT
    # Bob may use the same name, and so may alice on another board.
    configuration_create(user=bob, project_id=board.id, name="Mine")
    second = a_project(name="Second", members={alice: "guest"})
    configuration_create(user=alice, project_id=second.id, name="Mine")
    assert names(alice, board) == ["Default", "Mine", "Other"]


# --- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "complaint"),
    [
        (None, "must be a string"),
        (42, "must be a string"),
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        ("x" * 101, "longer than 100"),
        ("tab\there", "control characters"),
        ("line\nbreak", "control characters"),
        ("Default", "built-in"),
        (" default ", "built-in"),
    ],
)
def test_a_bad_name_is_refused_and_nothing_is_stored(
    alice: Any, board: Project, name: Any, complaint: str
) -> None:
    error = refusal(configuration_create, user=alice, project_id=board.id, name=name)
    assert error.code == ErrorCode.INVALID_ARGUMENT
    assert complaint in error.message
    assert error.details == {"field": "name"}
    assert not Configuration.objects.exists()


def test_names_of_one_to_a_hundred_characters_of_any_script_are_fine(
    alice: Any, board: Project
) -> None:
    for name in ["x", "y" * 100, "Überblick 👩‍💻", "Default view"]:
        assert configuration_create(user=alice, project_id=board.id, name=name).name == name


@pytest.mark.parametrize(
    "values",
    [None, [], "text", 1, [{"a": 1}]],
    ids=["null", "list", "string", "number", "list-of-objects"],
)
def test_values_must_be_a_json_object(alice: Any, board: Project, values: Any) -> None:
    error = refusal(
        configuration_create, user=alice, project_id=board.id, name="Mine", values=values
    )
    assert error.code == ErrorCode.INVALID_ARGUMENT
    assert error.message == "values must be a JSON object"
    assert not Configuration.objects.exists()


@pytest.mark.parametrize(
    "values",
    [{"n": float("nan")}, {"n": float("inf")}, {1: "key"}, {"when": object()}],
    ids=["nan", "infinity", "int-key", "object"],
)
def test_values_must_be_plain_json(alice: Any, board: Project, values: Any) -> None:
    error = refusal(
        configuration_create, user=alice, project_id=board.id, name="Mine", values=values
    )
    assert error.code == ErrorCode.INVALID_ARGUMENT
    assert error.details["field"] == "values"


def test_values_are_capped_at_64_kib(alice: Any, board: Project) -> None:
    envelope = len('{"s":""}')
    fits = {"s": "x" * (MAX_VALUES_BYTES - envelope)}
    made = configuration_create(user=alice, project_id=board.id, name="Full", values=fits)
    too_big = {"s": "x" * (MAX_VALUES_BYTES - envelope + 1)}
    error = refusal(
        configuration_update,
        user=alice,
        project_id=board.id,
        configuration_id=made.id,
        values=too_big,
    )
    assert error.code == ErrorCode.TOO_LARGE
    assert error.details == {"limit": MAX_VALUES_BYTES, "field": "values"}
    assert configuration_get(user=alice, project_id=board.id, configuration_id=made.id) == made


def test_values_nested_too_deeply_are_refused(alice: Any, board: Project) -> None:
    deep: dict[str, Any] = {}
    for _ in range(70):
        deep = {"d": deep}
    error = refusal(configuration_create, user=alice, project_id=board.id, name="D", values=deep)
    assert error.code == ErrorCode.INVALID_ARGUMENT
    assert "nested deeper" in error.message


def test_a_person_keeps_at_most_a_hundred_configurations_per_board(
    alice: Any, bob: Any, board: Project
) -> None:
    Configuration.objects.bulk_create(
        Configuration(user=alice, project=board, name=f"c{n}") for n in range(MAX_CONFIGURATIONS)
    )
    full = refusal(configuration_create, user=alice, project_id=board.id, name="one more")
    assert full.code == ErrorCode.TOO_LARGE
    first = configuration_list(user=alice, project_id=board.id)[1]
    copy = refusal(
        configuration_duplicate, user=alice, project_id=board.id, configuration_id=first.id
    )
    assert copy.code == ErrorCode.TOO_LARGE
    assert configuration_create(user=bob, project_id=board.id, name="one more").name


# --- duplicate -------------------------------------------------------------------------------


def test_duplicating_copies_the_values_under_a_copy_name(alice: Any, board: Project) -> None:
    made = configuration_create(user=alice, project_id=board.id, name="Sprint", values={"w": 2})
    configuration_activate(user=alice, project_id=board.id, configuration_id=made.id)
    first = configuration_duplicate(user=alice, project_id=board.id, configuration_id=made.id)
    second = configuration_duplicate(user=alice, project_id=board.id, configuration_id=made.id)
    assert (first.name, first.values, first.active) == ("Sprint (copy)", {"w": 2}, False)
    assert second.name == "Sprint (copy 2)"
    assert len({made.id, first.id, second.id}) == 3
    assert active_of(alice, board).id == made.id
    # The copy is independent of the original.
    configuration_update(user=alice, project_id=board.id, configuration_id=first.id, values={})
    assert configuration_get(user=alice, project_id=board.id, configuration_id=made.id).values == {
        "w": 2
    }


def test_duplicating_with_a_name_or_from_the_default(alice: Any, board: Project) -> None:
    made = configuration_create(user=alice, project_id=board.id, name="Sprint", values={"w": 2})
    named = configuration_duplicate(
        user=alice, project_id=board.id, configuration_id=made.id, name="Next sprint"
    )
    assert (named.name, named.values) == ("Next sprint", {"w": 2})
    taken = refusal(
        configuration_duplicate,
        user=alice,
        project_id=board.id,
        configuration_id=made.id,
        name="Sprint",
    )
    assert taken.code == ErrorCode.CONFLICT
    bad = refusal(
        configuration_duplicate, user=alice, project_id=board.id, configuration_id=made.id, name=""
    )
    assert bad.code == ErrorCode.INVALID_ARGUMENT
    fresh = configuration_duplicate(user=alice, project_id=board.id, configuration_id="")
    assert (fresh.name, fresh.values) == ("Default (copy)", {})


def test_a_copy_of_a_long_name_still_fits(alice: Any, board: Project) -> None:
    made = configuration_create(user=alice, project_id=board.id, name="n" * 100)
    copy = configuration_duplicate(user=alice, project_id=board.id, configuration_id=made.id)
    assert copy.name == "n" * 93 + " (copy)"
    assert len(copy.name) == 100


# --- switching and deleting ------------------------------------------------------------------


def test_activating_switches_the_one_active_configuration(alice: Any, board: Project) -> None:
    one = configuration_create(user=alice, project_id=board.id, name="One", values={"n": 1})
    two = configuration_create(user=alice, project_id=board.id, name="Two")
    switched = configuration_activate(user=alice, project_id=board.id, configuration_id=one.id)
    assert switched.id == one.id and switched.active
    assert active_of(alice, board).for_bridge() == {"id": one.id, "name": "One", "values": {"n": 1}}
    configuration_activate(user=alice, project_id=board.id, configuration_id=two.id)
    flags = {item.name: item.active for item in configuration_list(user=alice, project_id=board.id)}
    assert flags == {"Default": False, "One": False, "Two": True}
    again = configuration_activate(user=alice, project_id=board.id, configuration_id=two.id)
    assert again.active
    back = configuration_activate(user=alice, project_id=board.id, configuration_id="")
    assert back == NamedConfiguration(id="", name="Default", values={}, active=True)
    assert not Configuration.objects.filter(is_active=True).exists()


def test_a_switch_is_not_an_edit(alice: Any, board: Project) -> None:
    made = configuration_create(user=alice, project_id=board.id, name="One")
    switched = configuration_activate(user=alice, project_id=board.id, configuration_id=made.id)
    assert switched.updated_at == made.updated_at


def test_the_database_itself_allows_one_active_configuration(alice: Any, board: Project) -> None:
    Configuration.objects.create(user=alice, project=board, name="One", is_active=True)
    with pytest.raises(IntegrityError), transaction.atomic():
        Configuration.objects.create(user=alice, project=board, name="Two", is_active=True)


def test_each_person_switches_on_their_own(alice: Any, bob: Any, board: Project) -> None:
    hers = configuration_create(user=alice, project_id=board.id, name="Hers")
    his = configuration_create(user=bob, project_id=board.id, name="His")
    configuration_activate(user=alice, project_id=board.id, configuration_id=hers.id)
    configuration_activate(user=bob, project_id=board.id, configuration_id=his.id)
    assert active_of(alice, board).id == hers.id
    assert active_of(bob, board).id == his.id
    configuration_activate(user=bob, project_id=board.id, configuration_id="")
    assert active_of(alice, board).id == hers.id


def test_deleting_removes_a_configuration(alice: Any, board: Project) -> None:
    keep = configuration_create(user=alice, project_id=board.id, name="Keep")
    drop = configuration_create(user=alice, project_id=board.id, name="Drop")
    configuration_activate(user=alice, project_id=board.id, configuration_id=keep.id)
    after = configuration_delete(user=alice, project_id=board.id, configuration_id=drop.id)
    assert after.id == keep.id
    assert names(alice, board) == ["Default", "Keep"]
    again = refusal(configuration_delete, user=alice, project_id=board.id, configuration_id=drop.id)
    assert again.code == ErrorCode.NOT_FOUND


def test_deleting_the_active_configuration_falls_back_to_the_default(
    alice: Any, board: Project
) -> None:
    made = configuration_create(user=alice, project_id=board.id, name="Active")
    configuration_activate(user=alice, project_id=board.id, configuration_id=made.id)
    after = configuration_delete(user=alice, project_id=board.id, configuration_id=made.id)
    assert after == NamedConfiguration(id="", name="Default", values={}, active=True)
    assert active_of(alice, board).id == ""


def test_the_default_keeps_each_persons_own_values_and_stays_out_of_every_list(
    alice: Any, bob: Any, board: Project
) -> None:
    view = {"view": {"filter": {"text": "bolts"}, "density": "compact"}}
    changed = configuration_update(
        user=alice, project_id=board.id, configuration_id="", values=view
    )
    assert (changed.id, changed.name, changed.values) == ("", "Default", view)
    configuration_update(user=alice, project_id=board.id, configuration_id="", values=view)

    assert configuration_active(user=alice, project_id=board.id).values == view
    assert configuration_active(user=bob, project_id=board.id).values == {}, "bob's own"
    listed = configuration_list(user=alice, project_id=board.id)
    assert [(c.id, c.name) for c in listed] == [("", "Default")]
    copy = configuration_duplicate(user=alice, project_id=board.id, configuration_id="")
    assert copy.values == view
    # Naming a configuration after nothing cannot reach the default's row.
    refused = refusal(configuration_create, user=alice, project_id=board.id, name="")
    assert refused.code == ErrorCode.INVALID_ARGUMENT


def test_the_default_can_be_read_and_switched_to_but_not_renamed_or_deleted(
    alice: Any, board: Project
) -> None:
    renamed = refusal(
        configuration_update, user=alice, project_id=board.id, configuration_id="", name="X"
    )
    deleted = refusal(configuration_delete, user=alice, project_id=board.id, configuration_id="")
    assert renamed.code == deleted.code == ErrorCode.BUILT_IN
    assert "Default" in renamed.message and "Default" in deleted.message


# --- who may ---------------------------------------------------------------------------------


def test_a_guest_manages_their_own_configurations(charlie: Any, board: Project) -> None:
    made = configuration_create(user=charlie, project_id=board.id, name="Guest view")
    configuration_update(
        user=charlie, project_id=board.id, configuration_id=made.id, values={"a": 1}
    )
    copy = configuration_duplicate(user=charlie, project_id=board.id, configuration_id=made.id)
    configuration_activate(user=charlie, project_id=board.id, configuration_id=copy.id)
    configuration_delete(user=charlie, project_id=board.id, configuration_id=made.id)
    assert names(charlie, board) == ["Default", "Guest view (copy)"]
    assert active_of(charlie, board).id == copy.id


def test_someone_outside_the_board_finds_nothing(alice: Any, board: Project) -> None:
    dave = a_user("dave")
    for call, kwargs in [
        (configuration_list, {}),
        (configuration_active, {}),
        (configuration_create, {"name": "Mine"}),
        (configuration_get, {"configuration_id": ""}),
        (configuration_activate, {"configuration_id": ""}),
    ]:
        error = refusal(call, user=dave, project_id=board.id, **kwargs)
        assert error.code == ErrorCode.NOT_FOUND, call
    unknown = refusal(configuration_list, user=alice, project_id=uuid.uuid4())
    assert unknown.code == ErrorCode.NOT_FOUND


def test_a_project_that_is_not_a_board_has_no_configurations(alice: Any) -> None:
    workflow = a_project(name="Pipeline", type="workflow", owner=alice)
    error = refusal(configuration_create, user=alice, project_id=workflow.id, name="Mine")
    assert error.code == ErrorCode.NOT_FOUND


def test_nobody_signed_in_is_unauthenticated(board: Project) -> None:
    error = refusal(configuration_list, user=AnonymousUser(), project_id=board.id)
    assert error.code == ErrorCode.UNAUTHENTICATED


def test_leaving_a_board_hides_ones_configurations_until_one_returns(
    alice: Any, bob: Any, board: Project
) -> None:
    made = configuration_create(user=bob, project_id=board.id, name="His")
    membership_set(user=bob, project=board, role=None)
    error = refusal(configuration_get, user=bob, project_id=board.id, configuration_id=made.id)
    assert error.code == ErrorCode.NOT_FOUND
    membership_set(user=bob, project=board, role="guest")
    assert names(bob, board) == ["Default", "His"]


# --- isolation -------------------------------------------------------------------------------


BOBS_ATTEMPTS: dict[str, tuple[Any, dict[str, Any]]] = {
    "get": (configuration_get, {}),
    "rename": (configuration_update, {"name": "Stolen"}),
    "change values": (configuration_update, {"values": {"x": 1}}),
    "duplicate": (configuration_duplicate, {}),
    "duplicate named": (configuration_duplicate, {"name": "Stolen"}),
    "activate": (configuration_activate, {}),
    "delete": (configuration_delete, {}),
}


@pytest.mark.parametrize("attempt", list(BOBS_ATTEMPTS))
def test_bob_cannot_touch_alices_configuration_and_cannot_tell_it_exists(
    alice: Any, bob: Any, board: Project, attempt: str
) -> None:
    made = configuration_create(user=alice, project_id=board.id, name="Hers", values={"s": 1})
    hers = configuration_activate(user=alice, project_id=board.id, configuration_id=made.id)
    call, extra = BOBS_ATTEMPTS[attempt]
    for_hers = refusal(call, user=bob, project_id=board.id, configuration_id=hers.id, **extra)
    for_nothing = refusal(
        call, user=bob, project_id=board.id, configuration_id=str(uuid.uuid4()), **extra
    )
    for_garbage = refusal(call, user=bob, project_id=board.id, configuration_id="../x", **extra)
    assert for_hers.code == ErrorCode.NOT_FOUND
    assert for_hers.as_dict() == for_nothing.as_dict() == for_garbage.as_dict()
    # Alice's configuration is exactly as she left it, and bob gained nothing.
    assert configuration_get(user=alice, project_id=board.id, configuration_id=hers.id) == hers
    assert active_of(alice, board).id == hers.id
    assert names(bob, board) == ["Default"]
    assert active_of(bob, board).id == ""


def test_alices_configuration_is_not_reachable_through_another_board(
    alice: Any, board: Project
) -> None:
    other = a_project(name="Other", owner=alice)
    hers = configuration_create(user=alice, project_id=board.id, name="Hers")
    error = refusal(configuration_get, user=alice, project_id=other.id, configuration_id=hers.id)
    assert error.code == ErrorCode.NOT_FOUND
    assert names(alice, other) == ["Default"]


def test_lists_show_only_ones_own(alice: Any, bob: Any, charlie: Any, board: Project) -> None:
    configuration_create(user=alice, project_id=board.id, name="Alice's")
    configuration_create(user=bob, project_id=board.id, name="Bob's")
    assert names(alice, board) == ["Default", "Alice's"]
    assert names(bob, board) == ["Default", "Bob's"]
    assert names(charlie, board) == ["Default"]


# --- two tabs at once ------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_tabs_switching_and_creating_at_once_leave_one_consistent_state(
    alice: Any, board: Project
) -> None:
    """Each thread is a browser tab with its own connection. Without the per-user lock,
    PostgreSQL would let two activations both clear, then both set, and the second commit
    would break the one-active constraint; two creates could both pass the name check."""
    made = [
        configuration_create(user=alice, project_id=board.id, name=f"c{n}").id for n in range(4)
    ]
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def tab(number: int) -> None:
        try:
            start.wait()
            for round in range(15):
                target = made[(number + round) % len(made)]
                configuration_activate(user=alice, project_id=board.id, configuration_id=target)
                try:
                    configuration_create(user=alice, project_id=board.id, name=f"new {round}")
                except KanbanError as error:
                    assert error.code == ErrorCode.CONFLICT
        except BaseException as error:
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=tab, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert Configuration.objects.filter(is_active=True).count() == 1
    assert Configuration.objects.filter(name__startswith="new ").count() == 15


def test_a_plugin_reaching_a_related_board_changes_no_configuration(
    alice: Any, board: Project
) -> None:
    with pytest.raises(KanbanError) as caught:
        configuration_update(
            user=alice, project_id=board.id, configuration_id="", values={"a": 1}, alias="stock"
        )
    assert caught.value.code == ErrorCode.INVALID_ARGUMENT
    assert caught.value.message == "a configuration belongs to this board"
    assert configuration_get(user=alice, project_id=board.id, configuration_id="").values == {}
