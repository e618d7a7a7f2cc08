"""Webhooks delivered to a real receiver by the real database worker: alice (the Board's
owner) adds one; bob moves a card; the receiver gets the signed payload within 2 s. A
receiver answering 500 gets tries with growing gaps, and one that keeps failing is turned
off, alice told, until a test gets through."""

from __future__ import annotations

import itertools
import json
import re
import time
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kanban.data.board.cards import board_action
from kanban.data.demo import demo_load
from kanban.data.kv import Provenance
from kanban.models import (
    DeliveryStatus,
    Notification,
    Project,
    Webhook,
    WebhookDelivery,
)
from kanban.webhooks.signing import signature_verify
from tests.kanban.webhooks.conftest import Receiver

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = Provenance(via="mcp", token="kb_agent00")


@pytest.fixture
def demo(transactional_db: None) -> dict[str, Any]:
    assert demo_load()
    return {
        "board": Project.objects.get(name="Board"),
        **{user.username: user for user in User.objects.all()},
    }


def add_webhook(demo: dict[str, Any], url: str, events: list[str] | None = None) -> str:
    """Alice adds it on the board's webhooks page; answers the signing secret it shows once."""
    page = Client()
    page.force_login(demo["alice"])
    answer = page.post(
        f"/boards/{demo['board'].id}/webhooks/",
        {"url": url, "events": events or ["card.moved", "card.added", "card.commented"]},
        follow=True,
    )
    assert answer.status_code == 200, answer.content
    found = re.search(rb'data-testid="webhook-secret">(whsec_[^<]+)<', answer.content)
    assert found
    return found.group(1).decode()


def move_a_card(demo: dict[str, Any], column: str = "done") -> dict[str, Any]:
    def act(action: str, **arguments: Any) -> Any:
        return board_action(
            action=action,
            user=demo["bob"],
            project_id=demo["board"].id,
            arguments=arguments,
            provenance=AGENT,
        )

    card = next(c for c in act("list")["cards"] if c["column"] != column)
    act("move", id=card["id"], column=column)
    return card


@pytest.mark.usefixtures("allow_private", "worker")
def test_a_card_move_reaches_the_receiver_signed_within_two_seconds(
    demo: dict[str, Any], receiver: Receiver
) -> None:
    secret = add_webhook(demo, receiver.url)

    moved_at = time.monotonic()
    card = move_a_card(demo)
    (got,) = receiver.wait_for(1, timeout=5)

    assert got.at - moved_at < 2.0, f"took {got.at - moved_at:.2f} s"
    assert got.path == "/hook?from=kanban"
    assert got.headers["Content-Type"] == "application/json"
    assert got.headers["X-Kanban-Event"] == "card.moved"
    assert signature_verify(
        secret=secret,
        header=got.headers["X-Kanban-Signature"],
        body=got.body,
        now=int(time.time()),
    )
    assert not signature_verify(
        secret="whsec_someone-else",
        header=got.headers["X-Kanban-Signature"],
        body=got.body,
        now=int(time.time()),
    )
    payload = json.loads(got.body)
    assert payload["event"] == "card.moved" and payload["actor"] == "bob"
    assert payload["id"] == got.headers["X-Kanban-Delivery"]
    assert payload["board"] == {"id": str(demo["board"].id), "name": "Board"}
    assert payload["data"]["card"]["id"] == card["id"]
    assert payload["data"]["from"] == {"column": card["column"]}
    assert payload["data"]["to"] == {"column": "done"}
    wait_until(lambda: WebhookDelivery.objects.get().status == DeliveryStatus.SUCCEEDED)
    assert WebhookDelivery.objects.get().response_code == 200


@pytest.mark.usefixtures("allow_private", "fast_retries", "worker")
def test_a_receiver_answering_500_gets_tries_with_growing_gaps(
    demo: dict[str, Any], receiver: Receiver
) -> None:
    receiver.always = 500
    add_webhook(demo, receiver.url)

    move_a_card(demo)
    tries = receiver.wait_for(4, timeout=10)
    time.sleep(2.0)  # a fifth would come within this (1.6 s after the fourth) if there were one

    assert len(receiver.received) == 4, "KANBAN_WEBHOOK_ATTEMPTS tries in all"
    gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(tries)]
    assert gaps[0] >= 0.2 and gaps[1] >= 0.4 and gaps[2] >= 0.8, gaps
    assert gaps[0] < gaps[1] < gaps[2], gaps
    assert len({got.headers["X-Kanban-Delivery"] for got in tries}) == 1, "one delivery"
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.FAILED and delivery.attempts == 4
    assert delivery.response_code == 500 and "receiver is broken" in delivery.error
    page = Client()
    page.force_login(demo["alice"])
    log = page.get(f"/boards/{demo['board'].id}/webhooks/").content.decode()
    assert 'data-status="failed"' in log and ">500<" in log


@pytest.mark.usefixtures("allow_private", "fast_retries", "worker")
def test_a_receiver_that_keeps_failing_is_turned_off_until_a_test_gets_through(
    demo: dict[str, Any], receiver: Receiver, settings: Any, mailoutbox: list[Any]
) -> None:
    settings.KANBAN_WEBHOOK_ATTEMPTS = 1
    settings.KANBAN_WEBHOOK_DISABLE_AFTER = 2
    receiver.always = 503
    demo["alice"].email = "alice@example.com"
    demo["alice"].save(update_fields=["email"])
    add_webhook(demo, receiver.url)

    move_a_card(demo, "done")
    receiver.wait_for(1, timeout=5)
    move_a_card(demo, "doing")
    receiver.wait_for(2, timeout=5)
    wait_until(lambda: not Webhook.objects.get().active)

    notice = Notification.objects.get(user=demo["alice"], via="webhooks")
    assert "turned off after 2 failed deliveries" in notice.text
    [mail] = [m for m in mailoutbox if m.to == ["alice@example.com"]]
    assert mail.subject.startswith("Kanban on "), "a notice like any other: mailed as she chose"
    move_a_card(demo, "todo")
    time.sleep(0.5)
    assert len(receiver.received) == 2, "nothing is sent to a webhook that is off"

    receiver.always = None
    page = Client()
    page.force_login(demo["alice"])
    hook = Webhook.objects.get()
    assert page.post(f"/boards/{demo['board'].id}/webhooks/{hook.id}/test").status_code == 302
    (*_, ping) = receiver.wait_for(3, timeout=5)
    assert ping.headers["X-Kanban-Event"] == "ping"
    wait_until(lambda: Webhook.objects.get().active)
    assert Webhook.objects.get().failures_in_row == 0


def wait_until(condition: Any, timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.usefixtures("allow_private")
def test_a_try_the_worker_was_running_when_it_stopped_is_queued_again(
    demo: dict[str, Any], receiver: Receiver
) -> None:
    from django_tasks_db.models import DBTaskResult

    from kanban.webhooks.delivery import webhook_deliveries_resume
    from tests.kanban.jobs.conftest import run_worker

    add_webhook(demo, receiver.url)
    move_a_card(demo)
    # As a worker killed mid-try leaves it:
    DBTaskResult.objects.filter(status="READY").update(status="RUNNING")

    assert webhook_deliveries_resume() == 1
    run_worker()

    assert len(receiver.wait_for(1, timeout=5)) == 1
    assert WebhookDelivery.objects.get().status == DeliveryStatus.SUCCEEDED
