"""Password guessing is bounded (red team, Low 8: 100 wrong passwords, then the right one,
signed in)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(settings: Any) -> Any:
    settings.KANBAN_LOGIN_MAX_FAILURES = 5
    return get_user_model().objects.create_user("alice", password="the right one")


def sign_in(password: str, *, username: str = "alice", address: str = "198.51.100.7") -> Any:
    return Client(REMOTE_ADDR=address).post(
        "/accounts/login/", {"username": username, "password": password}
    )


def test_after_too_many_wrong_passwords_even_the_right_one_is_refused_and_says_why(
    alice: Any,
) -> None:
    for _ in range(5):
        assert sign_in("a guess").status_code == 200
    refused = sign_in("the right one")
    assert refused.status_code == 200, "still the login form"
    assert "Too many failed sign-ins" in refused.content.decode()
    assert "_auth_user_id" not in refused.wsgi_request.session


def test_fewer_failures_do_not_lock_and_a_success_starts_the_count_again(alice: Any) -> None:
    for _ in range(4):
        sign_in("a guess")
    assert sign_in("the right one").status_code == 302
    for _ in range(4):
        sign_in("a guess")
    assert sign_in("the right one").status_code == 302


def test_the_lock_is_per_account_and_ends_with_its_window(alice: Any, settings: Any) -> None:
    get_user_model().objects.create_user("bob", password="bobs")
    for _ in range(5):
        sign_in("a guess")
    assert sign_in("bobs", username="bob", address="203.0.113.9").status_code == 302
    settings.KANBAN_LOGIN_WINDOW = 0
    assert sign_in("the right one").status_code == 302


def test_the_admin_login_is_bounded_too(alice: Any) -> None:
    alice.is_staff = True
    alice.save()
    for _ in range(5):
        Client().post("/admin/login/", {"username": "alice", "password": "a guess"})
    response = Client().post("/admin/login/", {"username": "alice", "password": "the right one"})
    assert response.status_code == 200 and "_auth_user_id" not in response.wsgi_request.session
