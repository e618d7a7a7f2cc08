"""Password guessing is bounded (100 wrong passwords, then the right one, once signed
in), across workers, and an attacker cannot lock the owner out or pass for another
address."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.test import Client

from tests.factories import a_user
from tests.live import Visitor

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(settings: Any) -> Any:
    settings.KANBAN_LOGIN_MAX_FAILURES = 5
    return a_user("alice", password="the right one")


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
    a_user("bob", password="bobs")
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


def test_an_attacker_elsewhere_locks_new_addresses_out_but_not_the_owners_usual_one(
    alice: Any,
) -> None:
    assert sign_in("the right one", address="198.51.100.7").status_code == 302
    for _ in range(5):
        sign_in("a guess", address="203.0.113.66")
    from_a_new_address = sign_in("the right one", address="192.0.2.5")
    assert "Too many failed sign-ins" in from_a_new_address.content.decode()
    assert sign_in("the right one", address="198.51.100.7").status_code == 302


def test_guessing_from_the_owners_own_address_is_bounded_there_too(alice: Any) -> None:
    assert sign_in("the right one").status_code == 302
    for _ in range(5):
        sign_in("a guess")
    assert "Too many failed sign-ins" in sign_in("the right one").content.decode()


def test_a_forged_x_forwarded_for_is_not_the_owners_address(alice: Any, settings: Any) -> None:
    settings.KANBAN_TRUSTED_PROXIES = ["127.0.0.1/32"]
    assert sign_in("the right one", address="198.51.100.7").status_code == 302

    def through_the_proxy(password: str, forwarded: str) -> Any:
        return Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=forwarded).post(
            "/accounts/login/", {"username": "alice", "password": password}
        )

    # The proxy appends the address it saw; what the attacker wrote stays on the left.
    for _ in range(5):
        through_the_proxy("a guess", "198.51.100.7, 203.0.113.66")
    refused = through_the_proxy("the right one", "198.51.100.7, 203.0.113.66")
    assert "Too many failed sign-ins" in refused.content.decode()
    assert through_the_proxy("the right one", "203.0.113.66, 198.51.100.7").status_code == 302


def test_a_refused_attempt_checks_no_password_and_says_so_only_then(alice: Any) -> None:
    for _ in range(5):
        assert "Too many" not in sign_in("a guess").content.decode()
    assert "Too many failed sign-ins" in sign_in("a guess").content.decode()


def test_an_office_behind_one_address_signs_in_many_times_without_being_locked(
    alice: Any,
) -> None:
    for _ in range(60):  # more than the address's 50 attempts: a success takes its own back
        assert sign_in("the right one").status_code == 302


@pytest.mark.django_db(transaction=True)
def test_parallel_guesses_over_three_workers_get_at_most_the_limit_of_password_checks(
    live_servers: Any,
) -> None:
    a_user("alice", password="the right one")
    workers = live_servers(3, env={"KANBAN_LOGIN_MAX_FAILURES": "10"})

    def guess(n: int) -> bool:
        """True when the password was checked (and found wrong)."""
        path, page = Visitor(workers[n % 3].url).submit_login("alice", f"guess {n}")
        assert path == "/accounts/login/"
        return "Too many failed sign-ins" not in page

    with ThreadPoolExecutor(max_workers=45) as pool:
        checked = sum(pool.map(guess, range(45)))
    assert checked == 10
