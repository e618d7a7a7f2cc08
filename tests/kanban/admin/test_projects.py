"""The admin, driven through Django's test client: an administrator grants, narrows and
revokes without a shell, and sees each relationship's live status."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AbstractUser
from django.test import Client

from kanban.access.decision import Op, access_project_data
from kanban.access.events import AccessChanged
from kanban.access.grant_rules import Grant, Rule
from kanban.access.memberships import membership_set
from kanban.access.relationships import declarations_of
from kanban.models import Membership, Project
from storage.errors import KanbanError
from tests.factories import a_declaration, a_user
from tests.kanban.conftest import MakeProject

pytestmark = pytest.mark.django_db

GRANT_FIELDS = ("read", "write", "knowledge_read", "knowledge_write", "entrypoints")


@pytest.fixture
def admin_client(db: None) -> Client:
    root = a_user("root", superuser=True)
    client = Client()
    client.force_login(root)
    return client


def change_url(project: Project) -> str:
    return f"/admin/kanban/project/{project.id}/change/"


def relationship_row(
    alias: str, project_id: uuid.UUID, *, row_id: int | None = None, **rules: str
) -> dict[str, str]:
    """One relationship inline row; ``rules`` as ``read="all"`` or ``read="prefixes a b"``."""
    row = {"alias": alias, "related_project_id": str(project_id), "id": str(row_id or "")}
    defaults = {"read": "all"}
    for name in GRANT_FIELDS:
        mode, *prefixes = (rules.get(name) or defaults.get(name, "none")).split(" ")
        row[f"{name}_mode"] = mode
        row[f"{name}_prefixes"] = "\n".join(prefixes)
    return row


def current_rows(project: Project) -> list[dict[str, str]]:
    """The relationship rows as the change page shows them, unchanged."""
    rows = []
    for relationship in project.relationships.order_by("position"):
        rules = {}
        for name in GRANT_FIELDS:
            mode = getattr(relationship, f"{name}_mode")
            rules[name] = " ".join([mode, *getattr(relationship, f"{name}_prefixes")])
        rows.append(
            relationship_row(
                relationship.alias,
                relationship.related_project_id,
                row_id=relationship.pk,
                **rules,
            )
        )
    return rows


def post_project(
    client: Client,
    project: Project,
    *,
    relationships: list[dict[str, str]] | None = None,
    memberships: list[dict[str, str]] | None = None,
    url: str | None = None,
    extra: dict[str, str] | None = None,
) -> Any:
    """Submit the project's change form with these inline rows (default: as they are)."""
    relationships = current_rows(project) if relationships is None else relationships
    if memberships is None:
        memberships = [
            {"id": str(m.pk), "user": str(m.user_id), "role": m.role}
            for m in project.memberships.all()
        ]
    data: dict[str, str] = {"name": project.name, "type": project.type, **(extra or {})}
    saved = not project._state.adding
    initial = {
        "relationships": project.relationships.count() if saved else 0,
        "memberships": project.memberships.count() if saved else 0,
    }
    for prefix, rows in (("relationships", relationships), ("memberships", memberships)):
        data[f"{prefix}-TOTAL_FORMS"] = str(len(rows))
        data[f"{prefix}-INITIAL_FORMS"] = str(initial[prefix])
        data[f"{prefix}-MIN_NUM_FORMS"] = "0"
        data[f"{prefix}-MAX_NUM_FORMS"] = "1000"
        for index, row in enumerate(rows):
            for field, value in row.items():
                data[f"{prefix}-{index}-{field}"] = value
    data.update(
        {
            "plugin_files-TOTAL_FORMS": "0",
            "plugin_files-INITIAL_FORMS": "0",
            "plugin_files-MIN_NUM_FORMS": "0",
            "plugin_files-MAX_NUM_FORMS": "0",
        }
    )
    return client.post(url or change_url(project), data)


def relationship_errors(response: Any) -> tuple[list[dict[str, list[str]]], list[str]]:
    """Per-row field errors and the list-wide errors of the relationships inline."""
    for inline in response.context["inline_admin_formsets"]:
        if inline.formset.prefix == "relationships":
            rows = [dict(form.errors) for form in inline.formset.forms]
            return rows, list(inline.formset.non_form_errors())
    raise AssertionError("no relationships inline on the page")


def test_an_admin_relates_two_projects_and_sees_pending_then_confirmed(
    admin_client: Client, make_project: MakeProject
) -> None:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")

    response = post_project(
        admin_client, shop, relationships=[relationship_row("warehouse", warehouse.id)]
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    page = admin_client.get(change_url(shop)).content.decode()
    assert "relationship-status-pending" in page
    assert "relationship-status-confirmed" not in page

    response = post_project(
        admin_client, warehouse, relationships=[relationship_row("shop", shop.id, write="all")]
    )
    assert response.status_code == 302

    for project in (shop, warehouse):
        page = admin_client.get(change_url(project)).content.decode()
        assert "relationship-status-confirmed" in page
        assert "relationship-status-pending" not in page
    assert declarations_of(warehouse)[0].grant == Grant(read=Rule("all"), write=Rule("all"))


def test_declaring_it_back_confirms_a_relationship_between_two_projects_of_one_owner(
    admin_client: Client, make_project: MakeProject
) -> None:
    """#27.7: the box under each declaration, checked by default on a new row."""
    shop, warehouse = make_project("Shop"), make_project("Warehouse")
    page = admin_client.get(change_url(shop)).content.decode()
    (box,) = re.findall(r'<input[^>]*name="relationships-__prefix__-declare_back"[^>]*>', page)
    assert " checked" in box, "checked by default on a new row"
    row = relationship_row("warehouse", warehouse.id, write="all") | {"declare_back": "on"}
    response = post_project(admin_client, shop, relationships=[row])
    assert response.status_code == 302, response.content.decode()[:2000]
    (back,) = declarations_of(warehouse)
    assert (back.alias, back.project_id) == ("shop", shop.id)
    assert back.grant == Grant(read=Rule("all"), write=Rule("none"))
    page = admin_client.get(change_url(shop)).content.decode()
    assert "relationship-status-confirmed" in page
    assert "Declared Shop in Warehouse as “shop” (read: all, write: none)." in page


def test_a_declaration_naming_no_project_here_shows_target_unknown(
    admin_client: Client, make_project: MakeProject
) -> None:
    shop = make_project("Shop")
    a_declaration(shop, "ghost", uuid.uuid4())

    page = admin_client.get(change_url(shop)).content.decode()

    assert "relationship-status-target-unknown" in page


def test_a_bad_alias_is_reported_on_the_alias_field_and_nothing_changes(
    admin_client: Client, make_project: MakeProject
) -> None:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")

    response = post_project(
        admin_client, shop, relationships=[relationship_row("Bad Alias", warehouse.id)]
    )

    assert response.status_code == 200
    rows, list_errors = relationship_errors(response)
    assert rows == [{"alias": ["alias 'Bad Alias' must match [a-z][a-z0-9_-]{0,63}"]}]
    assert list_errors == []
    assert declarations_of(shop) == []


def test_33_prefixes_are_reported_on_the_prefixes_field(
    admin_client: Client, make_project: MakeProject
) -> None:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")
    prefixes = " ".join(f"p{n}:" for n in range(33))

    response = post_project(
        admin_client,
        shop,
        relationships=[relationship_row("warehouse", warehouse.id, read=f"prefixes {prefixes}")],
    )

    assert response.status_code == 200
    rows, _ = relationship_errors(response)
    assert rows == [{"read_prefixes": ["read.prefixes allows at most 32 prefixes (got 33)"]}]
    assert "read.prefixes allows at most 32 prefixes (got 33)" in response.content.decode()
    assert declarations_of(shop) == []


def test_list_wide_rules_are_reported_on_the_right_row_or_the_whole_list(
    admin_client: Client, make_project: MakeProject
) -> None:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")

    response = post_project(
        admin_client,
        shop,
        relationships=[
            relationship_row("warehouse", warehouse.id),
            relationship_row("warehouse", uuid.uuid4()),
            relationship_row("me", shop.id),
        ],
    )
    rows, _ = relationship_errors(response)
    assert rows == [
        {},
        {"alias": ["alias 'warehouse' is already used by relationship 1"]},
        {"related_project_id": ["projectId must name another project, not this one"]},
    ]

    response = post_project(
        admin_client,
        shop,
        relationships=[relationship_row(f"r{n}", uuid.uuid4()) for n in range(33)],
    )
    _, list_errors = relationship_errors(response)
    assert list_errors == ["relatedProjects allows at most 32 relationships (got 33)"]


def test_an_admin_grants_narrows_and_revokes_and_each_change_applies_at_once(
    admin_client: Client,
    make_project: MakeProject,
    alice: AbstractUser,
    access_events: list[AccessChanged],
    committing: Callable[..., Any],
) -> None:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")
    a_declaration(shop, "warehouse", warehouse)
    a_declaration(warehouse, "shop", shop, Grant(read=Rule("all"), write=Rule("all")))
    for project in (shop, warehouse):
        membership_set(user=alice, project=project, role="developer")

    def can(op: Op, key: str) -> bool:
        try:
            access_project_data(user=alice, consumer_id=shop.id, alias="warehouse", op=op, key=key)
        except KanbanError:
            return False
        return True

    assert can(Op.SET, "orders:1")

    (row,) = current_rows(warehouse)
    with committing():
        response = post_project(
            admin_client,
            warehouse,
            relationships=[{**row, "write_mode": "prefixes", "write_prefixes": "stock:"}],
        )
    assert response.status_code == 302
    assert not can(Op.SET, "orders:1")
    assert can(Op.SET, "stock:1")

    (row,) = current_rows(warehouse)
    with committing():
        response = post_project(admin_client, warehouse, relationships=[{**row, "DELETE": "on"}])
    assert response.status_code == 302
    assert not can(Op.GET, "stock:1")
    assert declarations_of(warehouse) == []

    assert (
        access_events
        == [AccessChanged(project_ids=frozenset({shop.id, warehouse.id}), user_ids=frozenset())] * 2
    )


def test_memberships_are_managed_inline_through_the_service(
    admin_client: Client,
    make_project: MakeProject,
    alice: AbstractUser,
    bob: AbstractUser,
    access_events: list[AccessChanged],
    committing: Callable[..., Any],
) -> None:
    board = make_project("Board")
    membership_set(user=alice, project=board, role="guest")
    (alice_row,) = [
        {"id": str(m.pk), "user": str(m.user_id), "role": m.role} for m in board.memberships.all()
    ]

    with committing():
        response = post_project(
            admin_client,
            board,
            memberships=[
                {**alice_row, "role": "developer"},
                {"user": str(bob.pk), "role": "guest"},
            ],
        )

    assert response.status_code == 302
    assert dict(board.memberships.values_list("user__username", "role")) == {
        "alice": "developer",
        "bob": "guest",
    }
    assert sorted(access_events, key=lambda e: sorted(e.user_ids)) == [
        AccessChanged(project_ids=frozenset({board.id}), user_ids=frozenset({alice.pk})),
        AccessChanged(project_ids=frozenset({board.id}), user_ids=frozenset({bob.pk})),
    ]

    rows = [
        {"id": str(m.pk), "user": str(m.user_id), "role": m.role, "DELETE": "on"}
        for m in board.memberships.order_by("user__username")
    ]
    rows[1].pop("DELETE")
    with committing():
        post_project(admin_client, board, memberships=rows)
    assert list(Membership.objects.filter(project=board).values_list("user__username")) == [
        ("bob",)
    ]


def test_adding_a_project_in_the_admin_generates_a_read_only_uuid(
    admin_client: Client, make_project: MakeProject
) -> None:
    warehouse = make_project("Warehouse")
    chosen = uuid.uuid4()
    template = Project(name="Shop", type="kanban")
    assert admin_client.get("/admin/kanban/project/add/").status_code == 200

    response = post_project(
        admin_client,
        template,
        relationships=[relationship_row("warehouse", warehouse.id)],
        memberships=[],
        url="/admin/kanban/project/add/",
        extra={"id": str(chosen)},
    )
    # A UUID in the form is ignored: the field is read-only.
    assert response.status_code == 302
    shop = Project.objects.get(name="Shop")
    assert shop.id != chosen
    assert [d.project_id for d in declarations_of(shop)] == [warehouse.id]
    page = admin_client.get(change_url(shop)).content.decode()
    assert str(shop.id) in page
    assert 'name="id"' not in page


def test_projects_are_found_by_name_and_by_uuid(
    admin_client: Client, make_project: MakeProject
) -> None:
    shop, warehouse = make_project("Corner shop"), make_project("Warehouse")

    by_name = admin_client.get("/admin/kanban/project/", {"q": "corner"}).content.decode()
    by_uuid = admin_client.get("/admin/kanban/project/", {"q": str(warehouse.id)}).content.decode()
    by_part = admin_client.get("/admin/kanban/project/", {"q": str(shop.id)[:8]}).content.decode()

    assert change_url(shop) in by_name and change_url(warehouse) not in by_name
    assert change_url(warehouse) in by_uuid and change_url(shop) not in by_uuid
    assert change_url(shop) in by_part


def test_deleting_a_project_in_the_admin_goes_through_the_service(
    admin_client: Client,
    make_project: MakeProject,
    access_events: list[AccessChanged],
    committing: Callable[..., Any],
) -> None:
    shop, warehouse = make_project("Shop"), make_project("Warehouse")
    a_declaration(warehouse, "shop", shop)
    shop_id = shop.id

    with committing():
        response = admin_client.post(f"/admin/kanban/project/{shop_id}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert not Project.objects.filter(pk=shop_id).exists()
    assert access_events == [
        AccessChanged(project_ids=frozenset({shop_id, warehouse.id}), user_ids=frozenset())
    ]


def test_deactivating_a_user_in_the_admin_announces_an_access_change(
    admin_client: Client,
    alice: AbstractUser,
    access_events: list[AccessChanged],
    committing: Callable[..., Any],
) -> None:
    page = admin_client.get(f"/admin/auth/user/{alice.pk}/change/")
    form = page.context["adminform"].form
    data = {
        name: value
        for name, value in form.initial.items()
        if value is not None and name not in {"password", "groups", "user_permissions"}
    }
    data.update({"is_active": "", "date_joined_0": "2025-01-01", "date_joined_1": "00:00:00"})
    data.pop("date_joined", None)
    data.pop("last_login", None)

    with committing():
        response = admin_client.post(f"/admin/auth/user/{alice.pk}/change/", data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    alice.refresh_from_db()
    assert not alice.is_active
    assert access_events == [AccessChanged(project_ids=frozenset(), user_ids=frozenset({alice.pk}))]
