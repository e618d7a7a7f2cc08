"""Administrators list API tokens and revoke them; a revoked token stops working at once."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from kanban.accounts.tokens import token_create
from kanban.models import ApiToken
from tests.factories import a_project, a_user

pytestmark = pytest.mark.django_db


def test_an_admin_lists_and_revokes_a_token_and_it_stops_working() -> None:
    root, bob = a_user("root", password="root-pw-123!", superuser=True), a_user("bob")
    token, plaintext = token_create(user=bob, name="deploy script")
    admin = Client()
    admin.force_login(root)
    listing = admin.get("/admin/kanban/apitoken/").content.decode()
    assert token.prefix in listing and "deploy script" in listing
    assert plaintext not in listing, "the plaintext is never shown"
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert api.get("/api/v1/projects/00000000-0000-4000-8000-000000000000/kv/k").status_code == 404
    response = admin.post(
        "/admin/kanban/apitoken/",
        {"action": "revoke", "_selected_action": [token.pk]},
        follow=True,
    )
    assert "Revoked 1 token(s)." in response.content.decode()
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None
    denied = api.get("/api/v1/projects/00000000-0000-4000-8000-000000000000/kv/k")
    assert denied.status_code == 401 and denied.json()["code"] == "unauthenticated"


def test_create_token_prints_the_token_alone() -> None:
    from io import StringIO

    from django.core.management import call_command

    a_user("carol")
    out = StringIO()
    call_command("create_token", "carol", stdout=out)
    printed = out.getvalue().strip()
    assert printed.startswith("kb_") and "\n" not in printed
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {printed}")
    response = api.get("/api/v1/projects/00000000-0000-4000-8000-000000000000/kv/k")
    assert response.json()["code"] == "not_found", "authenticated, just not a member"


def test_an_admin_creates_a_scoped_token_and_sees_its_plaintext_once() -> None:
    root, bob = a_user("root", password="root-pw-123!", superuser=True), a_user("bob")
    board = a_project(name="Board", members={bob: "developer"})
    elsewhere = a_project(name="Elsewhere")
    admin = Client()
    admin.force_login(root)

    refused = admin.post(
        "/admin/kanban/apitoken/add/",
        {"user": bob.pk, "name": "agent", "project": elsewhere.pk, "scope": "read"},
    )
    assert refused.status_code == 200 and "is not on a project" in refused.content.decode()
    assert not ApiToken.objects.exists()

    made = admin.post(
        "/admin/kanban/apitoken/add/",
        {"user": bob.pk, "name": "agent", "project": board.pk, "scope": "read"},
        follow=True,
    )
    page = made.content.decode()
    token = ApiToken.objects.get()
    assert (token.user, token.project, token.scope) == (bob, board, "read")
    shown = page.split("The new token is ", 1)[1].split(" ", 1)[0]
    assert shown.startswith(token.prefix)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {shown}")
    assert api.get(f"/api/v1/projects/{board.id}/kv/k").status_code == 404  # read, absent
    assert shown not in admin.get(f"/admin/kanban/apitoken/{token.pk}/change/").content.decode()
