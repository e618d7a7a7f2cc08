"""The world the tests build, in one place: people, projects with their members, the
relationships (and grants) between projects, and what a Board holds.

Each factory goes through the product's own service for what it makes (``project_create``,
``membership_set``, ``relationship_declare``, ``board_create``, ``project_kv_set``), so a
test's world is one the product could have made, access-changed events and all. Readable
people: alice, bob, carol (or charlie) and dave; read a test's setup as a sentence::

    alice, bob = users("alice", "bob")
    shop = a_project(name="Shop", owner=alice, members={bob: "developer"})
    stock = a_project(name="Stock", owner=alice)
    a_relationship(shop, stock, a_calls_b="stock", b_calls_a="shop", b_grants_a=Grant(read=ALL))
    launch = a_board(owner=alice, name="Launch")
    board_data(launch, cards={"c1": {"title": "Press kit"}})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID, uuid4

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AbstractUser

from kanban.access.grant_rules import Grant, Rule
from kanban.access.memberships import membership_set
from kanban.access.relationships import relationship_declare
from kanban.data.board.layout import COLUMNS_KEY, INDEX_KEY, card_key
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from kanban.models import Membership, Project
from kanban.projects.board_templates import board_create
from kanban.projects.lifecycle import project_create
from storage import kv

#: How the factories' Board writes are recorded: as the command line would write them.
BY_THE_CLI = Provenance(via="cli")


# People ---------------------------------------------------------------------------------


def a_user(
    username: str,
    *,
    password: str | None = None,
    staff: bool = False,
    superuser: bool = False,
    **fields: Any,
) -> AbstractUser:
    """A person. Without a password by default (they sign in by session or token): tests
    that sign in by password give one. A superuser is staff as well, as Django makes one."""
    people = get_user_model().objects
    if superuser:
        return people.create_superuser(username, password=password, **fields)
    if staff:
        fields["is_staff"] = True
    return people.create_user(username, password=password, **fields)


def users(*usernames: str) -> tuple[AbstractUser, ...]:
    """Several people without passwords, in the order named."""
    return tuple(a_user(username) for username in usernames)


# Projects -------------------------------------------------------------------------------


def a_project(
    *,
    name: str = "Board",
    type: str = "kanban",
    project_id: UUID | None = None,
    owner: AbstractBaseUser | None = None,
    members: Mapping[AbstractBaseUser, str] | None = None,
) -> Project:
    """A project with these members ({person: role}), the owner first; a project nobody
    belongs to without either."""
    project = project_create(name=name, type=type, project_id=project_id)
    if owner is not None:
        membership_set(user=owner, project=project, role="owner")
    for user, role in (members or {}).items():
        membership_set(user=user, project=project, role=role)
    return project


def a_board(
    *,
    owner: AbstractBaseUser,
    name: str = "Board",
    template: str = "board",
    members: Mapping[AbstractBaseUser, str] | None = None,
) -> Project:
    """A project made from a template (the built-in Board unless told), as a person makes
    one from the dashboard, with these other members ({person: role})."""
    board = board_create(user=owner, name=name, template=template)
    for user, role in (members or {}).items():
        membership_set(user=user, project=board, role=role)
    return board


# Relationships and grants ---------------------------------------------------------------

#: A grant that allows nothing: every operation's rule is "none".
NOTHING = Grant(*(Rule("none"),) * 5)


def a_declaration(
    project: Project, alias: str, target: Project | UUID, grant: Grant | None = None
) -> None:
    """``project`` declares ``target`` under ``alias``, granting it ``grant``: one side of a
    relationship (confirmed once ``target`` declares ``project`` back)."""
    target_id = target.id if isinstance(target, Project) else target
    relationship_declare(project=project, alias=alias, project_id=target_id, grant=grant)


def a_relationship(
    a: Project,
    b: Project,
    *,
    a_calls_b: str,
    b_calls_a: str,
    a_grants_b: Grant | None = None,
    b_grants_a: Grant | None = None,
) -> None:
    """A confirmed relationship: both sides declare each other, each with its own grant."""
    a_declaration(a, a_calls_b, b, a_grants_b)
    a_declaration(b, b_calls_a, a, b_grants_a)


def a_mutual_relationship(
    a: Project, b: Project, *, a_calls_b: str, b_calls_a: str, grant: Grant
) -> None:
    """A confirmed relationship in which each side grants the other the same ``grant``."""
    a_relationship(
        a, b, a_calls_b=a_calls_b, b_calls_a=b_calls_a, a_grants_b=grant, b_grants_a=grant
    )


def a_board_and_inventory(
    *,
    grant: Grant,
    owner: AbstractBaseUser | None = None,
    members: Mapping[AbstractBaseUser, str] | None = None,
    names: tuple[str, str] = ("Board", "Inventory"),
) -> tuple[Project, Project]:
    """The pair the demo has: a board that calls an inventory ``inventory`` (granting it
    nothing more than the default), and the inventory, which calls the board ``board`` and
    grants it ``grant``; the same owner and members ({person: role}) on both."""
    board, inventory = (a_project(name=name, owner=owner, members=members) for name in names)
    a_relationship(board, inventory, a_calls_b="inventory", b_calls_a="board", b_grants_a=grant)
    return board, inventory


def a_reciprocity_case(
    consumer: Project, target: Project, elsewhere: Project, *, reciprocity: str, grant: Grant
) -> None:
    """One of the grant matrix's reciprocity cases: the consumer calls the target
    ``inventory``; the target grants ``grant`` back under ``shop``, or to ``elsewhere``, or
    never hears of the consumer. The consumer's own grant is all "none": it must not matter
    for the consumer's access to the target."""
    if reciprocity in {"confirmed", "only-consumer-declares", "target-points-elsewhere"}:
        a_declaration(consumer, "inventory", target, NOTHING)
    if reciprocity in {"confirmed", "only-target-declares"}:
        a_declaration(target, "shop", consumer, grant)
    if reciprocity == "target-points-elsewhere":
        a_declaration(target, "other", elsewhere, grant)
    if reciprocity == "target-missing":
        a_declaration(consumer, "inventory", uuid4(), NOTHING)


# Board data -----------------------------------------------------------------------------


def board_data(
    project: Project,
    *,
    by: AbstractBaseUser | None = None,
    columns: Sequence[Mapping[str, Any]] | None = None,
    cards: Mapping[str, Mapping[str, Any]] | None = None,
    comments: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> None:
    """Write what the Board keeps (bridge_js/plugins/board/app.js's layout) through the KV
    service, as ``by`` (the project's first owner unless given): the columns when given,
    each card ({id: fields}, in column "todo" unless the fields say otherwise) with the
    index listing them in that order, then each card's comments ({id: [comment, ...]}), as
    their authors left them (stored beneath the KV service, which takes a new comment only
    from its author: kanban/data/board/comments.py)."""
    writer = by if by is not None else _an_owner_of(project)

    def put(key: str, value: Any) -> None:
        project_kv_set(
            target=Target(user=writer, project_id=project.id),
            key=key,
            value=value,
            provenance=BY_THE_CLI,
        )

    if columns is not None:
        put(COLUMNS_KEY, [dict(column) for column in columns])
    if cards is not None:
        for card_id, fields in cards.items():
            put(card_key(card_id), {"id": card_id, "column": "todo", **fields})
        put(INDEX_KEY, list(cards))
    for card_id, thread in (comments or {}).items():
        kv.kv_set(
            dataset=kv.Dataset(project.id),
            key=f"comments:{card_id}",
            value=[dict(comment) for comment in thread],
            source={"user": writer.get_username(), "userId": writer.pk, "via": "cli"},
        )


def _an_owner_of(project: Project) -> Any:
    membership = (
        Membership.objects.filter(project=project, role="owner")
        .select_related("user")
        .order_by("created_at", "pk")
        .first()
    )
    if membership is None:
        raise ValueError(f"{project.name} has no owner to write its Board: say who, by=...")
    return membership.user
