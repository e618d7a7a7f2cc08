"""Where a webhook may post. With the operator's setting off (the default), a URL naming a
loopback, private, link-local, multicast or reserved address is refused at save, and at
delivery after resolving the name, without a request; a URL with credentials or another
scheme than http(s) is refused with a clear reason, and nothing is written."""

from __future__ import annotations

import ipaddress
import time
from typing import Any

import pytest
from django.test import Client

from kanban.models import DeliveryStatus, Project, Webhook, WebhookDelivery
from kanban.webhooks.addresses import check_webhook_url, ip_allowed, webhook_target
from kanban.webhooks.delivery import webhook_deliver
from kanban.webhooks.service import webhook_create, webhook_test
from storage.errors import KanbanError
from tests.factories import a_project
from tests.kanban.webhooks.conftest import Receiver


@pytest.fixture
def board(alice: Any, bob: Any) -> Project:
    return a_project(name="Roadmap", owner=alice, members={bob: "developer"})


def refusal(url: str) -> KanbanError:
    with pytest.raises(KanbanError) as raised:
        check_webhook_url(url)
    return raised.value


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook",
        "http://localhost/hook",
        "http://[::1]/hook",
        "http://10.1.2.3/",
        "http://192.168.1.1/",
        "http://172.16.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/",
        "http://224.0.0.1/",
        "http://0.0.0.0/",
        "http://240.0.0.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://[fe80::1]/",
        "http://[fd00::1]/",
        "http://2130706433/",  # 127.0.0.1 as one number: resolved, then refused
        "http://0x7f.1/",
        "http://127.1:8080/",
    ],
)
def test_addresses_that_are_not_public_are_refused(url: str) -> None:
    refused = refusal(url)

    assert refused.code == "invalid_argument" and refused.details["reason"] == "address"
    assert "KANBAN_WEBHOOKS_ALLOW_PRIVATE" in refused.message


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://user:secret@example.com/hook", "credentials"),
        ("https://token@example.com/hook", "credentials"),
        ("ftp://example.com/hook", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("javascript:alert(1)", "scheme"),
        ("example.com/hook", "scheme"),
        ("https://", "form"),
        ("https://exa mple.com/", "form"),
        ("", "missing"),
    ],
)
def test_urls_with_credentials_or_other_schemes_are_refused(url: str, reason: str) -> None:
    assert refusal(url).details["reason"] == reason


def test_public_addresses_pass() -> None:
    assert check_webhook_url("https://93.184.216.34/hook") == "https://93.184.216.34/hook"
    assert ip_allowed(ipaddress.ip_address("2606:4700::1111"))
    assert not ip_allowed(ipaddress.ip_address("::ffff:10.0.0.1"))


def test_the_operator_may_allow_private_addresses(settings: Any) -> None:
    settings.KANBAN_WEBHOOKS_ALLOW_PRIVATE = True

    target = webhook_target("http://localhost:8123/a?b=c")

    assert target.ip in {"127.0.0.1", "::1"} and target.path == "/a?b=c"
    assert target.host == "localhost" and target.port == 8123


@pytest.mark.django_db
def test_a_refused_url_on_the_page_writes_nothing(alice: Any, board: Project) -> None:
    page = Client()
    page.force_login(alice)
    for url, reason in [
        ("http://127.0.0.1:9/hook", "address"),
        ("https://me:pw@example.com/", "credentials"),
        ("gopher://example.com/", "scheme"),
    ]:
        answer = page.post(f"/boards/{board.id}/webhooks/", {"url": url, "events": ["card.moved"]})
        assert answer.status_code == 400
        assert f'data-reason="{reason}"'.encode() in answer.content
    assert not Webhook.objects.exists()


@pytest.mark.django_db
def test_no_events_or_an_unknown_one_writes_nothing(alice: Any, board: Project) -> None:
    for events in ([], ["card.moved", "card.burned"], ["ping"], "card.moved"):
        with pytest.raises(KanbanError) as raised:
            webhook_create(
                actor=alice, project_id=board.id, url="https://93.184.216.34/", events=events
            )
        assert raised.value.details["field"] == "events"
    assert not Webhook.objects.exists()


@pytest.mark.django_db
def test_a_delivery_to_an_address_no_longer_allowed_is_not_sent(
    alice: Any, board: Project, receiver: Receiver, settings: Any
) -> None:
    settings.KANBAN_WEBHOOKS_ALLOW_PRIVATE = True
    hook, _ = webhook_create(
        actor=alice, project_id=board.id, url=receiver.url, events=["card.moved"]
    )
    settings.KANBAN_WEBHOOKS_ALLOW_PRIVATE = False

    delivery = webhook_test(actor=alice, project_id=board.id, webhook_id=hook.id)
    webhook_deliver(delivery_id=delivery.id)
    time.sleep(0.2)

    assert receiver.received == []
    done = WebhookDelivery.objects.get(pk=delivery.pk)
    assert done.status == DeliveryStatus.FAILED and done.attempts == 1, "never retried"
    assert "may not reach 127.0.0.1" in done.error


@pytest.mark.django_db
def test_a_redirect_is_not_followed(
    alice: Any, board: Project, receiver: Receiver, settings: Any
) -> None:
    settings.KANBAN_WEBHOOKS_ALLOW_PRIVATE = True
    receiver.always = 307  # wherever it points, nothing follows it
    hook, _ = webhook_create(
        actor=alice, project_id=board.id, url=receiver.url, events=["card.moved"]
    )

    delivery = webhook_test(actor=alice, project_id=board.id, webhook_id=hook.id)
    webhook_deliver(delivery_id=delivery.id)

    assert len(receiver.wait_for(1, timeout=2)) == 1
    done = WebhookDelivery.objects.get(pk=delivery.pk)
    assert done.status == DeliveryStatus.RETRYING and done.response_code == 307
    assert done.error.startswith("answered 307")
