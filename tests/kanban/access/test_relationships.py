"""Declaration validation (the one place every entry point uses), the JSON shape, the
declaration services, live statuses and access-changed events."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AbstractUser
from django.db import transaction

from kanban.access.events import AccessChanged
from kanban.access.grant_rules import Grant, Rule
from kanban.access.memberships import membership_set
from kanban.access.relationships import (
    Declaration,
    RelationshipStatus,
    check_declarations,
    declarations_from_json,
    declarations_of,
    format_path,
    relationship_remove,
    relationship_statuses,
    relationships_set,
)
from kanban.models import Relationship
from kanban.projects.lifecycle import project_delete
from storage.errors import KanbanError
from tests.factories import a_declaration, a_relationship
from tests.kanban.conftest import MakeProject

pytestmark = pytest.mark.django_db

HOME = uuid.UUID("11111111-1111-4111-8111-111111111111")
OTHER = uuid.UUID("22222222-2222-4222-8222-222222222222")


def problems_of(*declarations: Declaration) -> list[tuple[str, str]]:
    return [
        (format_path("relatedProjects", problem.path), problem.message)
        for problem in check_declarations(project_id=HOME, declarations=declarations)
    ]


def related(
    alias: str = "inventory", project_id: uuid.UUID | None = None, **rules: Rule
) -> Declaration:
    return Declaration(alias=alias, project_id=project_id or uuid.uuid4(), grant=Grant(**rules))


# --- aliases, count, uniqueness, self reference ----------------------------------------------


@pytest.mark.parametrize(
    "alias", ["a", "inventory", "stock-2", "a_b-c9", "z" + "9" * 63], ids=lambda a: a[:12]
)
def test_aliases_of_the_grammar_are_accepted(alias: str) -> None:
    assert problems_of(related(alias)) == []


@pytest.mark.parametrize(
    "alias",
    ["", "Inventory", "9lives", "_x", "-x", "has space", "dot.ted", "é", "a" * 65],
    ids=lambda a: repr(a[:12]),
)
def test_aliases_outside_the_grammar_are_refused_naming_the_field(alias: str) -> None:
    assert problems_of(related(alias)) == [
        ("relatedProjects[0].alias", f"alias {alias!r} must match [a-z][a-z0-9_-]{{0,63}}")
    ]


def test_at_most_32_relationships() -> None:
    thirty_two = [related(f"r{n}") for n in range(32)]

    assert problems_of(*thirty_two) == []
    assert problems_of(*thirty_two, related("r32")) == [
        ("relatedProjects", "relatedProjects allows at most 32 relationships (got 33)")
    ]


def test_aliases_and_project_ids_are_unique_within_a_project() -> None:
    assert problems_of(
        related("inventory", OTHER), related("inventory"), related("stock", OTHER)
    ) == [
        ("relatedProjects[1].alias", "alias 'inventory' is already used by relationship 1"),
        (
            "relatedProjects[2].projectId",
            f"projectId {OTHER} is already declared by relationship 1",
        ),
    ]


def test_a_project_cannot_relate_to_itself() -> None:
    assert problems_of(related("me", HOME)) == [
        ("relatedProjects[0].projectId", "projectId must name another project, not this one")
    ]


# --- rules -----------------------------------------------------------------------------------


def test_prefixes_needs_one_to_32_non_empty_unique_prefixes() -> None:
    thirty_two = tuple(f"p{n}:" for n in range(32))
    assert problems_of(related(read=Rule("prefixes", thirty_two))) == []
    assert problems_of(
        related("a", read=Rule("prefixes", ())),
        related("b", write=Rule("prefixes", (*thirty_two, "p32:"))),
        related("c", knowledge_read=Rule("prefixes", ("x", ""))),
        related("d", entrypoints=Rule("prefixes", ("kb_", "kb_"))),
    ) == [
        (
            "relatedProjects[0].grantToRelatedProject.read.prefixes",
            "read.prefixes needs at least 1 prefix with mode 'prefixes'",
        ),
        (
            "relatedProjects[1].grantToRelatedProject.write.prefixes",
            "write.prefixes allows at most 32 prefixes (got 33)",
        ),
        (
            "relatedProjects[2].grantToRelatedProject.knowledge.read.prefixes[1]",
            "knowledge.read.prefixes[1] must be a non-empty string",
        ),
        (
            "relatedProjects[3].grantToRelatedProject.entrypoints.prefixes[1]",
            "entrypoints.prefixes[1] repeats 'kb_'",
        ),
    ]


def test_none_and_all_carry_no_prefixes_and_modes_are_known() -> None:
    assert problems_of(
        related("a", read=Rule("all", ("x",))),
        related("b", knowledge_write=Rule("none", ("x",))),
        related("c", write=Rule("some", ())),  # type: ignore[arg-type]
    ) == [
        (
            "relatedProjects[0].grantToRelatedProject.read.prefixes",
            "read.prefixes is only allowed with mode 'prefixes'",
        ),
        (
            "relatedProjects[1].grantToRelatedProject.knowledge.write.prefixes",
            "knowledge.write.prefixes is only allowed with mode 'prefixes'",
        ),
        (
            "relatedProjects[2].grantToRelatedProject.write.mode",
            "write.mode must be one of none, all, prefixes",
        ),
    ]


# --- the JSON shape --------------------------------------------------------------------------


def test_the_seeds_json_shape_reads_into_declarations() -> None:
    raw = [
        {
            "alias": "inventory",
            "projectId": str(OTHER),
            "grantToRelatedProject": {"read": {"mode": "all"}, "write": {"mode": "none"}},
        },
        {
            "alias": "database",
            "projectId": "f4ee23d7-abbb-4ba3-8baf-75b7c6c0b964",
            "grantToRelatedProject": {
                "read": {"mode": "all"},
                "write": {"mode": "none"},
                "knowledge": {"read": {"mode": "all"}, "write": {"mode": "all"}},
                "entrypoints": {"mode": "prefixes", "prefixes": ["kb_"]},
            },
        },
        {"alias": "defaults", "projectId": str(uuid.UUID(int=7))},
    ]

    declarations, problems = declarations_from_json(raw, project_id=HOME)

    assert problems == []
    assert declarations == [
        Declaration("inventory", OTHER, Grant()),
        Declaration(
            "database",
            uuid.UUID("f4ee23d7-abbb-4ba3-8baf-75b7c6c0b964"),
            Grant(
                knowledge_read=Rule("all"),
                knowledge_write=Rule("all"),
                entrypoints=Rule("prefixes", ("kb_",)),
            ),
        ),
        Declaration("defaults", uuid.UUID(int=7), Grant()),
    ]
    assert [declaration.as_json() for declaration in declarations[:2]] == raw[:2]


def test_knowledge_prefixes_are_document_ids_and_old_storage_key_spellings_still_work() -> None:
    raw = [
        {
            "alias": "wiki",
            "projectId": str(OTHER),
            "grantToRelatedProject": {
                "knowledge": {
                    "read": {"mode": "prefixes", "prefixes": ["kb_"]},
                    "write": {"mode": "prefixes", "prefixes": ["knowledge.document.kb_"]},
                },
            },
        }
    ]
    (declaration,), problems = declarations_from_json(raw, project_id=HOME)
    assert problems == []
    assert declaration.grant.knowledge_read == Rule("prefixes", ("kb_",))
    assert declaration.grant.knowledge_write == Rule("prefixes", ("kb_",))
    assert declaration.grant.knowledge_read.allows("kb_1")
    assert not declaration.grant.knowledge_read.allows("notes")


def test_json_problems_carry_their_paths() -> None:
    raw: list[Any] = [
        "not an object",
        {"alias": 3, "projectId": "not-a-uuid"},
        {
            "alias": "ok",
            "projectId": str(OTHER),
            "grantToRelatedProject": {
                "raed": {"mode": "all"},
                "write": {"mode": "prefixes", "prefixes": "stock:"},
                "knowledge": {"read": "all"},
            },
        },
        {"alias": "Bad", "projectId": str(HOME)},
    ]

    _, problems = declarations_from_json(raw, project_id=HOME)

    assert [(format_path("relatedProjects", p.path), p.message) for p in problems] == [
        ("relatedProjects[0]", "a relationship must be an object"),
        ("relatedProjects[1].alias", "alias is required and must be a string"),
        ("relatedProjects[1].projectId", "projectId 'not-a-uuid' is not a UUID"),
        ("relatedProjects[2].grantToRelatedProject.raed", "unknown field 'raed'"),
        (
            "relatedProjects[2].grantToRelatedProject.write.prefixes",
            "write.prefixes must be a list",
        ),
        (
            "relatedProjects[2].grantToRelatedProject.knowledge.read",
            "knowledge.read must be an object with a mode",
        ),
        ("relatedProjects[3].alias", "alias 'Bad' must match [a-z][a-z0-9_-]{0,63}"),
        ("relatedProjects[3].projectId", "projectId must name another project, not this one"),
    ]


def test_related_projects_must_be_a_list() -> None:
    _, problems = declarations_from_json({"alias": "x"}, project_id=HOME)

    assert [(p.path, p.message) for p in problems] == [((), "relatedProjects must be a list")]


# --- services --------------------------------------------------------------------------------


def test_declarations_are_stored_in_order_and_read_back(make_project: MakeProject) -> None:
    shop = make_project("Shop")
    wanted = [
        Declaration("warehouse", uuid.uuid4(), Grant(write=Rule("prefixes", ("stock:",)))),
        Declaration("billing", uuid.uuid4()),
    ]

    relationships_set(project=shop, declarations=wanted)

    assert declarations_of(shop) == wanted


def test_an_invalid_list_is_refused_whole_and_changes_nothing(make_project: MakeProject) -> None:
    shop = make_project("Shop")
    a_declaration(shop, "warehouse", OTHER)

    with pytest.raises(KanbanError) as caught:
        relationships_set(
            project=shop,
            declarations=[Declaration("billing", uuid.uuid4()), Declaration("Bad!", uuid.uuid4())],
        )

    assert caught.value.code == "invalid_argument"
    assert caught.value.details["problems"] == [
        {
            "path": "relatedProjects[1].alias",
            "message": "alias 'Bad!' must match [a-z][a-z0-9_-]{0,63}",
        }
    ]
    assert [d.alias for d in declarations_of(shop)] == ["warehouse"]


def test_declaring_again_replaces_the_alias_and_removing_reports_whether_it_existed(
    make_project: MakeProject,
) -> None:
    shop = make_project("Shop")
    a_declaration(shop, "warehouse", OTHER)
    a_declaration(shop, "billing", uuid.UUID(int=5))
    a_declaration(shop, "warehouse", OTHER, Grant(read=Rule("none")))

    assert [(d.alias, d.grant.read) for d in declarations_of(shop)] == [
        ("warehouse", Rule("none")),
        ("billing", Rule("all")),
    ]
    assert relationship_remove(project=shop, alias="warehouse") is True
    assert relationship_remove(project=shop, alias="warehouse") is False
    assert [d.alias for d in declarations_of(shop)] == ["billing"]


def test_the_database_refuses_self_reference_even_past_the_services(
    make_project: MakeProject,
) -> None:
    from django.db import IntegrityError

    shop = make_project("Shop")
    with pytest.raises(IntegrityError), transaction.atomic():
        Relationship.objects.create(project=shop, alias="me", related_project_id=shop.id)


# --- status ----------------------------------------------------------------------------------


def test_status_is_confirmed_pending_or_target_unknown(make_project: MakeProject) -> None:
    shop, warehouse, billing = (
        make_project("Shop"),
        make_project("Warehouse"),
        make_project("Billing"),
    )
    missing = uuid.uuid4()
    a_relationship(shop, warehouse, a_calls_b="warehouse", b_calls_a="shop")
    a_declaration(shop, "billing", billing)
    a_declaration(shop, "ghost", missing)
    a_declaration(billing, "someone-else", warehouse)

    statuses = relationship_statuses(
        project_id=shop.id, related_project_ids=[warehouse.id, billing.id, missing]
    )

    assert statuses == {
        warehouse.id: RelationshipStatus.CONFIRMED,
        billing.id: RelationshipStatus.PENDING,
        missing: RelationshipStatus.TARGET_UNKNOWN,
    }


# --- access-changed events -------------------------------------------------------------------


def test_changing_declarations_publishes_after_commit_naming_both_sides(
    make_project: MakeProject,
    access_events: list[AccessChanged],
    committing: Callable[..., Any],
) -> None:
    shop, warehouse, billing = (
        make_project("Shop"),
        make_project("Warehouse"),
        make_project("Billing"),
    )
    a_declaration(shop, "warehouse", warehouse)  # outside the block: its callback never runs

    with committing():
        relationships_set(project=shop, declarations=[Declaration("billing", billing.id)])
        assert access_events == [], "nothing is published before the commit"

    assert access_events == [
        AccessChanged(
            project_ids=frozenset({shop.id, warehouse.id, billing.id}), user_ids=frozenset()
        )
    ]


def test_saving_an_unchanged_list_publishes_nothing(
    make_project: MakeProject,
    access_events: list[AccessChanged],
    committing: Callable[..., Any],
) -> None:
    shop = make_project("Shop")
    a_declaration(shop, "warehouse", OTHER)

    with committing():
        relationships_set(project=shop, declarations=declarations_of(shop))

    assert access_events == []


def test_changing_a_membership_publishes_the_project_and_the_user(
    make_project: MakeProject,
    alice: AbstractUser,
    access_events: list[AccessChanged],
    committing: Callable[..., Any],
) -> None:
    board = make_project("Board")

    with committing():
        membership_set(user=alice, project=board, role="guest")
    with committing():
        membership_set(user=alice, project=board, role="guest")  # no change, no event
    with committing():
        membership_set(user=alice, project=board, role=None)

    expected = AccessChanged(project_ids=frozenset({board.id}), user_ids=frozenset({alice.pk}))
    assert access_events == [expected, expected]


def test_a_rolled_back_change_publishes_nothing(
    make_project: MakeProject,
    alice: AbstractUser,
    access_events: list[AccessChanged],
    committing: Callable[..., Any],
) -> None:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")

    with committing(), pytest.raises(RuntimeError), transaction.atomic():
        a_declaration(shop, "warehouse", warehouse)
        membership_set(user=alice, project=shop, role="owner")
        raise RuntimeError("abort")

    assert access_events == []
    assert declarations_of(shop) == []


def test_deleting_a_project_names_everyone_it_touched(
    make_project: MakeProject,
    alice: AbstractUser,
    access_events: list[AccessChanged],
    committing: Callable[..., Any],
) -> None:
    shop, warehouse, billing = (
        make_project("Shop"),
        make_project("Warehouse"),
        make_project("Billing"),
    )
    a_declaration(shop, "warehouse", warehouse)
    a_declaration(billing, "shop", shop)
    membership_set(user=alice, project=shop, role="owner")
    shop_id = shop.id

    with committing():
        project_delete(project=shop)

    assert access_events == [
        AccessChanged(
            project_ids=frozenset({shop_id, warehouse.id, billing.id}),
            user_ids=frozenset({alice.pk}),
        )
    ]
    assert relationship_statuses(project_id=billing.id, related_project_ids=[shop_id]) == {
        shop_id: RelationshipStatus.TARGET_UNKNOWN
    }


@pytest.mark.django_db(transaction=True)
def test_events_follow_a_real_commit(
    make_project: MakeProject, access_events: list[AccessChanged]
) -> None:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")

    with transaction.atomic():
        a_declaration(shop, "warehouse", warehouse)
        assert access_events == []

    assert access_events == [
        AccessChanged(project_ids=frozenset({shop.id, warehouse.id}), user_ids=frozenset())
    ]
