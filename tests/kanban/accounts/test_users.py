"""Usernames people can tell apart: no look-alike, invisible or reordering characters."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from kanban.accounts.users import user_create
from storage.errors import KanbanError
from tests.factories import a_user

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple 42"


@pytest.mark.parametrize(
    "username",
    [
        "\u0430lice",  # Cyrillic a: reads as "alice"
        "al\u200bice",  # a zero-width space
        "bob\u202eecila",  # a right-to-left override: shows as "bobalice"
        "<b>carol</b>",
        "dora smith",
        "",
        "x" * 151,
    ],
)
def test_adduser_refuses_a_username_that_could_pass_for_another(username: str) -> None:
    with pytest.raises(KanbanError) as caught:
        user_create(username=username, password=PASSWORD)
    assert caught.value.code == "invalid_argument"
    assert not get_user_model().objects.exists()


def test_a_username_differing_only_in_case_is_taken() -> None:
    user_create(username="alice", password=PASSWORD)
    with pytest.raises(KanbanError) as caught:
        user_create(username="Alice", password=PASSWORD)
    assert caught.value.code == "conflict"


def test_the_admin_refuses_the_same_usernames() -> None:
    admin = a_user("root", password=PASSWORD, superuser=True)
    client = Client()
    client.force_login(admin)
    form = {"username": "\u0430lice", "password1": PASSWORD, "password2": PASSWORD}
    response = client.post("/admin/auth/user/add/", form)
    assert response.status_code == 200
    assert "ASCII letters" in response.content.decode()
    assert not get_user_model().objects.filter(username="\u0430lice").exists()
    response = client.post("/admin/auth/user/add/", {**form, "username": "Root"})
    assert not get_user_model().objects.filter(username="Root").exists()
    response = client.post("/admin/auth/user/add/", {**form, "username": "alice.m"})
    assert get_user_model().objects.filter(username="alice.m").exists()
