"""The board's webhooks page is its owners': alice adds one (the secret shown once), sees
its log, sends a test and deletes it; bob, a developer, is refused; a stranger finds no
board."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from kanban.models import Project, Webhook, WebhookDelivery
from kanban.webhooks.service import webhook_test
from tests.factories import a_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def board(alice: Any, bob: Any) -> Project:
    return a_project(name="Roadmap", owner=alice, members={bob: "developer"})


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_owner_adds_tests_and_deletes_a_webhook(alice: Any, board: Project) -> None:
    page = signed_in(alice)
    where = f"/boards/{board.id}/webhooks/"

    added = page.post(
        where, {"url": "https://93.184.216.34/hook", "events": ["card.moved"]}, follow=True
    )
    hook = Webhook.objects.get()
    assert added.status_code == 200 and hook.secret.encode() in added.content
    assert hook.events == ["card.moved"] and hook.created_by == alice
    listing = page.get(where)
    assert hook.secret.encode() not in listing.content, "the secret is shown once"
    assert (
        page.post(where, {"url": "https://93.184.216.34/hook", "events": ["card.moved"]})[
            "Location"
        ]
        == where
    ), "the page that shows it is a redirect's: a reload makes no second webhook"
    assert b"Nothing sent yet." in listing.content
    assert b'data-testid="webhooks-link"' in page.get(f"/boards/{board.id}/members/").content

    assert page.post(f"{where}{hook.id}/test").status_code == 302
    assert WebhookDelivery.objects.get().event == "ping"
    assert b'data-status="pending"' in page.get(where).content

    assert page.post(f"{where}{hook.id}/delete").status_code == 302
    assert not Webhook.objects.filter(pk=hook.pk).exists()
    assert not WebhookDelivery.objects.exists()


def test_a_developer_is_refused_and_a_stranger_finds_no_board(
    alice: Any, bob: Any, charlie: Any, board: Project
) -> None:
    where = f"/boards/{board.id}/webhooks/"
    signed_in(alice).post(where, {"url": "https://93.184.216.34/", "events": ["card.moved"]})
    hook = Webhook.objects.get()

    assert signed_in(bob).get(where).status_code == 403
    assert signed_in(bob).post(f"{where}{hook.id}/delete").status_code == 403
    assert signed_in(charlie).get(where).status_code == 404
    assert signed_in(charlie).post(f"{where}{hook.id}/test").status_code == 404
    assert Webhook.objects.filter(pk=hook.pk).exists() and not WebhookDelivery.objects.exists()
    assert (
        b'data-testid="webhooks-link"'
        not in signed_in(bob).get(f"/boards/{board.id}/members/").content
    )


def test_another_boards_webhook_is_not_found(alice: Any, board: Project) -> None:
    other = a_project(name="Other", owner=alice)
    signed_in(alice).post(
        f"/boards/{other.id}/webhooks/", {"url": "https://93.184.216.34/", "events": ["ping"]}
    )
    assert not Webhook.objects.exists(), "ping is not an event one subscribes to"
    signed_in(alice).post(
        f"/boards/{other.id}/webhooks/", {"url": "https://93.184.216.34/", "events": ["card.added"]}
    )
    hook = Webhook.objects.get()

    assert signed_in(alice).post(f"/boards/{board.id}/webhooks/{hook.id}/delete").status_code == 404
    assert Webhook.objects.filter(pk=hook.pk).exists()


def test_the_log_keeps_the_newest_deliveries(
    alice: Any, board: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kanban.webhooks.service.LOG_KEPT", 3)
    signed_in(alice).post(
        f"/boards/{board.id}/webhooks/", {"url": "https://93.184.216.34/", "events": ["card.added"]}
    )
    hook = Webhook.objects.get()

    for _ in range(5):
        webhook_test(actor=alice, project_id=board.id, webhook_id=hook.id)

    assert WebhookDelivery.objects.filter(webhook=hook).count() == 3
