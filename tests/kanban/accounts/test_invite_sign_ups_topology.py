"""The sign-up limits hold for the deployment, through the production topology: the
repository's nginx configuration in front of three daphne workers on PostgreSQL and Redis,
as in the production-topology scenario. People on their own machines (loopback addresses)
sign up at once through mallory's link; nginx spreads them over the workers, and the day's
limits still count every worker's sign-ups as one.

Runs on PostgreSQL + Redis (CI's second pass) when nginx is installed;
``KANBAN_REQUIRE_NGINX=1`` makes its absence a failure.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection

from bench.nginx import NGINX, nginx_in_front_of
from kanban.accounts.invites import invite_create
from tests.factories import a_project, a_user
from tests.kanban.bridge.test_scale_out import redis_layer, redis_reachable
from tests.live import HOST, LiveServer, Visitor

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]
__all__ = ["redis_layer"]

STRONG = "a long enough passphrase 7"


@pytest.fixture(autouse=True)
def _needs_the_topology() -> None:
    why = None
    if connection.vendor != "postgresql" or not redis_reachable():
        why = "the production topology runs on PostgreSQL and Redis"
    elif not os.access(NGINX, os.X_OK):
        why = "nginx is not installed (apt-get install nginx)"
    if why is None:
        return
    if os.environ.get("KANBAN_REQUIRE_NGINX") == "1" and "nginx" in why:
        pytest.fail(f"KANBAN_REQUIRE_NGINX=1 but {why}")
    pytest.skip(why)


def a_link(owner: Any, board: str) -> str:
    project = a_project(name=board, owner=owner)
    return invite_create(actor=owner, project_id=project.id, role="guest", uses=100).path


def sign_up(base_url: str, path: str, username: str, *, source: str) -> tuple[int, str]:
    """A person at ``source`` opens the link and signs up: (status, page)."""
    visitor = Visitor(base_url, source=source)
    visitor.get(path)
    form = {
        "username": username,
        "password": STRONG,
        "password2": STRONG,
        "csrfmiddlewaretoken": visitor.cookie(settings.CSRF_COOKIE_NAME),
    }
    sent = urllib.request.Request(
        base_url + path,
        data=urllib.parse.urlencode(form).encode(),
        headers={"Referer": base_url + path},
    )
    try:
        with visitor.opener.open(sent, timeout=60) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def posts_on(server: LiveServer) -> int:
    return server.output(tail=10**7).count('"POST /invites/')


def test_the_daily_sign_up_limits_hold_across_three_workers_behind_nginx(
    live_servers: Callable[..., list[LiveServer]], redis_layer: dict[str, str]
) -> None:
    mallory, erin = a_user("mallory"), a_user("erin")
    crowd, erins = a_link(mallory, "Crowd"), a_link(erin, "Erin's")
    env = redis_layer | {
        "KANBAN_TRUSTED_PROXIES": HOST,
        "KANBAN_INVITE_SIGNUPS_PER_INVITER_DAY": "5",
        "KANBAN_INVITE_SIGNUPS_PER_ADDRESS_DAY": "3",
    }
    workers = live_servers(3, env=env)
    people = get_user_model().objects
    with nginx_in_front_of([worker.port for worker in workers]) as proxy:
        # Twelve people, each on a machine of their own, through mallory's link at once.
        with ThreadPoolExecutor(12) as pool:
            crowd_answers = list(
                pool.map(
                    lambda n: sign_up(proxy.url, crowd, f"sock{n}", source=f"127.0.0.{10 + n}"),
                    range(12),
                )
            )
        # Six from one machine, through erin's link (her own count is fresh).
        with ThreadPoolExecutor(6) as pool:
            one_address = list(
                pool.map(
                    lambda n: sign_up(proxy.url, erins, f"desk{n}", source="127.0.0.50"),
                    range(6),
                )
            )
    served = [posts_on(worker) for worker in workers]
    print(f"sign-ups through nginx per worker: {served}")
    assert sum(count > 0 for count in served) > 1, "nginx spread the sign-ups over workers"

    assert sorted(status for status, _ in crowd_answers) == [200] * 5 + [429] * 7
    assert people.filter(username__startswith="sock").count() == 5
    refused = [page for status, page in crowd_answers if status == 429]
    assert all("through @mallory&#x27;s invite links today" in page for page in refused)

    assert sorted(status for status, _ in one_address) == [200] * 3 + [429] * 3
    assert people.filter(username__startswith="desk").count() == 3
    assert all("from your address today" in page for status, page in one_address if status == 429)
