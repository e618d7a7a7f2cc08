"""The one access decision, checked against tables written from the product rules (seed
000 "Generic relationships" and "Server access"), not from the implementation."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import AbstractUser, AnonymousUser

from kanban.access.decision import Op, access_project_data
from kanban.access.grant_rules import Grant, Rule
from kanban.access.memberships import membership_set
from kanban.access.relationships import relationship_remove
from kanban.models import Project
from storage.errors import KanbanError
from tests.factories import a_declaration, a_reciprocity_case, a_relationship, a_user
from tests.kanban.conftest import MakeProject

pytestmark = pytest.mark.django_db

OPS = ["get", "subscribe", "set", "update", "knowledge.read", "knowledge.write"]
ROLES = [None, "guest", "developer", "owner"]


def outcome(
    *, user: Any, consumer: Project | uuid.UUID, alias: str | None, op: str, key: str | None
) -> str:
    """ "ok" or the error code, so tables can say what they expect in one word."""
    consumer_id = consumer.id if isinstance(consumer, Project) else consumer
    try:
        access_project_data(user=user, consumer_id=consumer_id, alias=alias, op=Op(op), key=key)
    except KanbanError as error:
        return str(error.code)
    return "ok"


# --- the grant matrix ------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleCase:
    rule: Rule
    key: str
    #: Does the rule open ``key``? (written by hand from "a key is allowed when it starts
    #: with any one prefix")
    opens_key: bool
    #: Does it open a subscription, which names no key ("the rule must not be none")?
    opens_subscription: bool


RULE_CASES = {
    "none": RuleCase(Rule("none"), "stock:1", opens_key=False, opens_subscription=False),
    "all": RuleCase(Rule("all"), "stock:1", opens_key=True, opens_subscription=True),
    "prefix-hit": RuleCase(
        Rule("prefixes", ("orders:", "stock:")), "stock:1", opens_key=True, opens_subscription=True
    ),
    "prefix-miss": RuleCase(
        Rule("prefixes", ("orders:", "stock:")), "stocks", opens_key=False, opens_subscription=True
    ),
    "prefix-ab-key-abc": RuleCase(
        Rule("prefixes", ("ab",)), "abc", opens_key=True, opens_subscription=True
    ),
    "prefix-abc-key-ab": RuleCase(
        Rule("prefixes", ("abc",)), "ab", opens_key=False, opens_subscription=True
    ),
}

RECIPROCITY = [
    "confirmed",
    "only-consumer-declares",  # B exists but does not point back
    "only-target-declares",  # B points at A, A has no alias for B
    "target-points-elsewhere",  # B declares a relationship, but to another project
    "target-missing",  # A's alias names a UUID this server does not have
]

RANK = {None: 0, "guest": 1, "developer": 2, "owner": 3}
NEEDS = {
    "get": "guest",
    "subscribe": "guest",
    "knowledge.read": "guest",
    "set": "developer",
    "update": "developer",
    "knowledge.write": "developer",
}


def expected(
    rule_case: str, reciprocity: str, consumer_role: str | None, target_role: str | None, op: str
) -> str:
    """The oracle, straight from the rules."""
    if consumer_role is None:
        return "not_found"
    if reciprocity == "only-target-declares":
        return "unknown_alias"
    if reciprocity != "confirmed":
        return "relationship_pending"
    need = RANK[NEEDS[op]]
    if RANK[consumer_role] < need or RANK[target_role] < need:
        return "forbidden"
    case = RULE_CASES[rule_case]
    opens = case.opens_subscription if op == "subscribe" else case.opens_key
    return "ok" if opens else "forbidden"


def matrix() -> list[Any]:
    return [
        pytest.param(*combo, id="-".join(str(part) for part in combo))
        for combo in itertools.product(RULE_CASES, RECIPROCITY, ROLES, ROLES)
    ]


@pytest.mark.parametrize(("rule_case", "reciprocity", "consumer_role", "target_role"), matrix())
def test_grant_matrix(
    make_project: MakeProject,
    alice: AbstractUser,
    rule_case: str,
    reciprocity: str,
    consumer_role: str | None,
    target_role: str | None,
) -> None:
    """Each row of the table is one arrangement of boards, roles and grant, with what every
    operation gets there: one arrangement a row, as it takes longer to make than to ask."""
    case = RULE_CASES[rule_case]
    consumer, target, elsewhere = make_project("A"), make_project("B"), make_project("C")
    # B's grant to A puts the rule under test on every field.
    grant = Grant(case.rule, case.rule, case.rule, case.rule, case.rule)
    a_reciprocity_case(consumer, target, elsewhere, reciprocity=reciprocity, grant=grant)
    if consumer_role:
        membership_set(user=alice, project=consumer, role=consumer_role)
    if target_role:
        membership_set(user=alice, project=target, role=target_role)

    got = {
        op: outcome(
            user=alice,
            consumer=consumer,
            alias="inventory",
            op=op,
            key=None if op == "subscribe" else case.key,
        )
        for op in OPS
    }
    assert got == {
        op: expected(rule_case, reciprocity, consumer_role, target_role, op) for op in OPS
    }


# --- which rule each operation consults ------------------------------------------------------

OPENED_FIELD_ALLOWS = {
    # field opened ("all"; every other field "none") -> the operations that succeed
    "read": {"get", "subscribe"},
    "write": {"set"},
    "knowledge_read": {"knowledge.read", "subscribe"},  # to hear document writes
    "knowledge_write": {"knowledge.write"},
    "entrypoints": set(),
    "read+write": {"get", "subscribe", "set", "update"},
}


@pytest.mark.parametrize("opened", list(OPENED_FIELD_ALLOWS))
def test_each_operation_consults_its_own_rule(
    make_project: MakeProject, alice: AbstractUser, opened: str
) -> None:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")
    rules = {
        name: Rule("all" if name in opened.split("+") else "none")
        for name in ("read", "write", "knowledge_read", "knowledge_write", "entrypoints")
    }
    a_relationship(
        shop, warehouse, a_calls_b="warehouse", b_calls_a="shop", b_grants_a=Grant(**rules)
    )
    membership_set(user=alice, project=shop, role="owner")
    membership_set(user=alice, project=warehouse, role="owner")

    allowed = {
        op
        for op in OPS
        if outcome(user=alice, consumer=shop, alias="warehouse", op=op, key="k") == "ok"
    }

    assert allowed == OPENED_FIELD_ALLOWS[opened]


def test_the_access_carries_the_targets_grant_to_the_consumer(
    make_project: MakeProject, alice: AbstractUser
) -> None:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")
    granted = Grant(read=Rule("prefixes", ("stock:",)), write=Rule("all"))
    a_relationship(shop, warehouse, a_calls_b="warehouse", b_calls_a="shop", b_grants_a=granted)
    membership_set(user=alice, project=shop, role="developer")
    membership_set(user=alice, project=warehouse, role="developer")

    access = access_project_data(
        user=alice, consumer_id=shop.id, alias="warehouse", op=Op.GET, key="stock:1"
    )

    assert (access.consumer_id, access.target_id, access.alias) == (
        shop.id,
        warehouse.id,
        "warehouse",
    )
    assert access.read == Rule("prefixes", ("stock:",))
    assert access.write == Rule("all")
    assert access.knowledge_read == Rule("none")
    assert not access.read.allows("orders:1")


# --- the current project ---------------------------------------------------------------------

CURRENT_PROJECT = {
    # role -> operations allowed on the consumer project itself
    None: set(),
    "guest": {"get", "subscribe", "knowledge.read"},
    "developer": set(OPS),
    "owner": set(OPS),
}


@pytest.mark.parametrize("role", ROLES, ids=str)
def test_the_current_project_needs_guest_to_read_and_developer_to_write(
    make_project: MakeProject, alice: AbstractUser, role: str | None
) -> None:
    board = make_project("Board")
    if role:
        membership_set(user=alice, project=board, role=role)

    results = {op: outcome(user=alice, consumer=board, alias=None, op=op, key="k") for op in OPS}

    for op, got in results.items():
        if op in CURRENT_PROJECT[role]:
            assert got == "ok", op
        else:
            assert got == ("not_found" if role is None else "forbidden"), op


def test_the_current_project_access_opens_every_rule(
    make_project: MakeProject, alice: AbstractUser
) -> None:
    board = make_project("Board")
    membership_set(user=alice, project=board, role="guest")

    access = access_project_data(user=alice, consumer_id=board.id, alias=None, op=Op.GET, key="k")

    assert (access.consumer_id, access.target_id, access.alias) == (board.id, board.id, None)
    assert {access.read, access.write, access.knowledge_read, access.knowledge_write} == {
        Rule("all")
    }


# --- who is asking ---------------------------------------------------------------------------


def test_anonymous_and_inactive_users_are_unauthenticated(make_project: MakeProject) -> None:
    board = make_project("Board")
    inactive = a_user("dora", is_active=False)
    membership_set(user=inactive, project=board, role="owner")
    inactive_superuser = a_user("root", is_active=False, is_superuser=True)

    for user in (AnonymousUser(), None, inactive, inactive_superuser):
        assert outcome(user=user, consumer=board, alias=None, op="get", key="k") == (
            "unauthenticated"
        )


def test_a_missing_project_and_a_project_without_membership_look_the_same(
    make_project: MakeProject, alice: AbstractUser
) -> None:
    board = make_project("Board")
    errors = []
    for consumer_id in (board.id, uuid.uuid4()):
        with pytest.raises(KanbanError) as caught:
            access_project_data(user=alice, consumer_id=consumer_id, alias=None, op=Op.GET, key="k")
        errors.append((caught.value.code, caught.value.message, caught.value.details))

    assert errors[0] == errors[1]
    assert errors[0][0] == "not_found"


def test_superusers_act_as_owners_of_every_project_but_grants_still_apply(
    make_project: MakeProject,
) -> None:
    root = a_user("root", superuser=True)
    shop, warehouse = make_project("Shop"), make_project("Warehouse")
    a_relationship(
        shop,
        warehouse,
        a_calls_b="warehouse",
        b_calls_a="shop",
        b_grants_a=Grant(read=Rule("prefixes", ("stock:",)), write=Rule("none")),
    )

    assert outcome(user=root, consumer=shop, alias=None, op="set", key="k") == "ok"
    assert outcome(user=root, consumer=shop, alias="warehouse", op="get", key="stock:1") == "ok"
    assert outcome(user=root, consumer=shop, alias="warehouse", op="get", key="x") == "forbidden"
    assert outcome(user=root, consumer=shop, alias="warehouse", op="set", key="stock:1") == (
        "forbidden"
    )
    assert outcome(user=root, consumer=uuid.uuid4(), alias=None, op="get", key="k") == "not_found"


def test_a_forbidden_message_says_nothing_about_why_the_target_refused(
    make_project: MakeProject, alice: AbstractUser, bob: AbstractUser
) -> None:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")
    grant = Grant(read=Rule("prefixes", ("stock:",)))
    a_relationship(shop, warehouse, a_calls_b="warehouse", b_calls_a="shop", b_grants_a=grant)
    # alice is no member of the warehouse; bob is, but the grant does not cover the key.
    membership_set(user=alice, project=shop, role="owner")
    membership_set(user=bob, project=shop, role="owner")
    membership_set(user=bob, project=warehouse, role="owner")

    refusals = []
    for user in (alice, bob):
        with pytest.raises(KanbanError) as caught:
            access_project_data(
                user=user, consumer_id=shop.id, alias="warehouse", op=Op.GET, key="orders:1"
            )
        refusals.append((caught.value.code, caught.value.message, caught.value.details))

    assert refusals[0] == refusals[1]
    assert refusals[0][0] == "forbidden"
    assert str(warehouse.id) not in refusals[0][1]


def test_related_access_costs_two_queries_and_current_access_one(
    make_project: MakeProject,
    alice: AbstractUser,
    django_assert_max_num_queries: Any,
) -> None:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")
    a_relationship(shop, warehouse, a_calls_b="warehouse", b_calls_a="shop")
    membership_set(user=alice, project=shop, role="guest")
    membership_set(user=alice, project=warehouse, role="guest")

    with django_assert_max_num_queries(2):
        access_project_data(user=alice, consumer_id=shop.id, alias="warehouse", op=Op.GET, key="k")
    with django_assert_max_num_queries(1):
        access_project_data(user=alice, consumer_id=shop.id, alias=None, op=Op.GET, key="k")


def test_an_unknown_operation_is_an_invalid_argument(
    make_project: MakeProject, alice: AbstractUser
) -> None:
    board = make_project("Board")
    membership_set(user=alice, project=board, role="owner")

    with pytest.raises(KanbanError) as caught:
        access_project_data(user=alice, consumer_id=board.id, alias=None, op="delete", key="k")  # type: ignore[arg-type]

    assert caught.value.code == "invalid_argument"


# --- the seed's hierarchy: adjacent relationships only ---------------------------------------


@pytest.fixture
def hierarchy(make_project: MakeProject, alice: AbstractUser) -> dict[str, Project]:
    """parent <-> child <-> grandchild, bidirectional read and write, no parent-grandchild."""
    parent, child, grandchild = (
        make_project("parent"),
        make_project("child"),
        make_project("grandchild"),
    )
    both = Grant(read=Rule("all"), write=Rule("all"))
    a_declaration(parent, "child", child, both)
    a_declaration(child, "parent", parent, both)
    a_declaration(child, "grandchild", grandchild, both)
    a_declaration(grandchild, "parent", child, both)
    for project in (parent, child, grandchild):
        membership_set(user=alice, project=project, role="developer")
    return {"parent": parent, "child": child, "grandchild": grandchild}


@pytest.mark.parametrize(
    ("consumer", "alias", "target"),
    [
        ("parent", "child", "child"),
        ("child", "parent", "parent"),
        ("child", "grandchild", "grandchild"),
        ("grandchild", "parent", "child"),
    ],
)
def test_adjacent_projects_reach_each_other_both_ways(
    hierarchy: dict[str, Project], alice: AbstractUser, consumer: str, alias: str, target: str
) -> None:
    for op in (Op.GET, Op.SET, Op.UPDATE, Op.SUBSCRIBE):
        access = access_project_data(
            user=alice, consumer_id=hierarchy[consumer].id, alias=alias, op=op, key="note"
        )
        assert access.target_id == hierarchy[target].id


def test_the_parent_cannot_reach_the_grandchild_through_any_alias(
    hierarchy: dict[str, Project], alice: AbstractUser
) -> None:
    parent, grandchild = hierarchy["parent"], hierarchy["grandchild"]
    reached = set()
    for alias in ("child", "grandchild", "parent"):
        for op in OPS:
            try:
                access = access_project_data(
                    user=alice, consumer_id=parent.id, alias=alias, op=Op(op), key="note"
                )
            except KanbanError as error:
                # The parent knows only "child"; the child grants no knowledge.
                assert error.code == ("forbidden" if alias == "child" else "unknown_alias")
                continue
            reached.add(access.target_id)

    assert reached == {hierarchy["child"].id}
    assert grandchild.id not in reached
    # Nor the other way round.
    assert outcome(user=alice, consumer=grandchild, alias="child", op="get", key="n") == (
        "unknown_alias"
    )


def test_access_never_recurses_through_the_child(
    hierarchy: dict[str, Project], alice: AbstractUser
) -> None:
    # Even if the grandchild declared the parent, one side alone grants nothing, and the
    # child's alias "grandchild" is not the parent's to use.
    a_declaration(
        hierarchy["grandchild"], "grandparent", hierarchy["parent"], Grant(write=Rule("all"))
    )

    assert outcome(
        user=alice, consumer=hierarchy["parent"], alias="grandchild", op="get", key="n"
    ) == ("unknown_alias")
    assert (
        outcome(
            user=alice, consumer=hierarchy["grandchild"], alias="grandparent", op="get", key="n"
        )
        == "relationship_pending"
    )


# --- changes apply to the next call ----------------------------------------------------------


@pytest.fixture
def shop_and_warehouse(make_project: MakeProject, alice: AbstractUser) -> tuple[Project, Project]:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")
    a_relationship(
        shop,
        warehouse,
        a_calls_b="warehouse",
        b_calls_a="shop",
        b_grants_a=Grant(read=Rule("all"), write=Rule("all")),
    )
    membership_set(user=alice, project=shop, role="developer")
    membership_set(user=alice, project=warehouse, role="developer")
    return shop, warehouse


def test_narrowing_a_rule_applies_to_the_next_call(
    shop_and_warehouse: tuple[Project, Project], alice: AbstractUser
) -> None:
    shop, warehouse = shop_and_warehouse
    assert outcome(user=alice, consumer=shop, alias="warehouse", op="get", key="orders:1") == "ok"

    a_declaration(warehouse, "shop", shop, Grant(read=Rule("prefixes", ("stock:",))))

    assert outcome(user=alice, consumer=shop, alias="warehouse", op="get", key="orders:1") == (
        "forbidden"
    )
    assert outcome(user=alice, consumer=shop, alias="warehouse", op="get", key="stock:1") == "ok"
    assert outcome(user=alice, consumer=shop, alias="warehouse", op="set", key="stock:1") == (
        "forbidden"
    )


def test_removing_a_relationship_applies_to_the_next_call(
    shop_and_warehouse: tuple[Project, Project], alice: AbstractUser
) -> None:
    shop, warehouse = shop_and_warehouse
    assert outcome(user=alice, consumer=shop, alias="warehouse", op="get", key="k") == "ok"

    relationship_remove(project=warehouse, alias="shop")
    assert outcome(user=alice, consumer=shop, alias="warehouse", op="get", key="k") == (
        "relationship_pending"
    )

    relationship_remove(project=shop, alias="warehouse")
    assert outcome(user=alice, consumer=shop, alias="warehouse", op="get", key="k") == (
        "unknown_alias"
    )


def test_removing_or_lowering_a_membership_applies_to_the_next_call(
    shop_and_warehouse: tuple[Project, Project], alice: AbstractUser
) -> None:
    shop, warehouse = shop_and_warehouse
    assert outcome(user=alice, consumer=shop, alias="warehouse", op="set", key="k") == "ok"

    membership_set(user=alice, project=warehouse, role="guest")
    assert outcome(user=alice, consumer=shop, alias="warehouse", op="set", key="k") == "forbidden"
    assert outcome(user=alice, consumer=shop, alias="warehouse", op="get", key="k") == "ok"

    membership_set(user=alice, project=warehouse, role=None)
    assert outcome(user=alice, consumer=shop, alias="warehouse", op="get", key="k") == "forbidden"

    membership_set(user=alice, project=shop, role=None)
    assert outcome(user=alice, consumer=shop, alias=None, op="get", key="k") == "not_found"
