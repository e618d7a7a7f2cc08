"""Webhook services: a board's owner adds, lists, tests and deletes its webhooks;
``webhook_event_send`` turns one event into a signed delivery per webhook that hears it,
each posted by the worker once the change commits."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from kanban.access.memberships import access_project_role
from kanban.models import Project, Role, Webhook, WebhookDelivery, WebhookEvent
from kanban.webhooks.addresses import check_webhook_url
from kanban.webhooks.hooked import hooked_projects_changed
from kanban.webhooks.signing import new_secret
from storage.errors import ErrorCode, KanbanError, invalid_argument

#: Webhooks one board may have.
MAX_WEBHOOKS: Final = 10
#: Deliveries the page shows per webhook (newest first).
LOG_SHOWN: Final = 20
#: Deliveries kept per webhook: a new one deletes the oldest past this, so the log stays
#: small however busy the board.
LOG_KEPT: Final = 200
#: The events an owner may pick (``ping`` is the test's own).
SUBSCRIBABLE: Final = tuple(event for event in WebhookEvent if event != WebhookEvent.PING)


@dataclass(frozen=True, slots=True)
class WebhookView:
    webhook: Webhook
    deliveries: list[WebhookDelivery]


def check_events(events: object) -> list[str]:
    if not isinstance(events, list) or not events:
        raise invalid_argument("pick at least one event", field="events")
    unknown = [event for event in events if event not in SUBSCRIBABLE]
    if unknown:
        raise invalid_argument(f"no such event: {unknown[0]!r}", field="events")
    return [event.value for event in SUBSCRIBABLE if event in events]


def _owned(actor: Any, project_id: UUID) -> Project:
    return access_project_role(
        user=actor, project_id=project_id, needed=Role.OWNER, doing="managing webhooks"
    )


def _webhook(project: Project, webhook_id: int) -> Webhook:
    webhook = Webhook.objects.filter(pk=webhook_id, project=project).first()
    if webhook is None:
        raise KanbanError(ErrorCode.NOT_FOUND, "no such webhook on this board")
    return webhook


def webhook_create(
    *, actor: Any, project_id: UUID, url: object, events: object
) -> tuple[Webhook, str]:
    """The new webhook and its signing secret (the receiver's copy: shown once). Refused,
    with nothing written, for a URL that is not http(s), has credentials or names an address
    that is not allowed, or for no events."""
    project = _owned(actor, project_id)
    checked_url = check_webhook_url(url)
    checked_events = check_events(events)
    with transaction.atomic():
        # Counted under the board's row lock: two owners adding at once stay within the cap.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        if Webhook.objects.filter(project=project).count() >= MAX_WEBHOOKS:
            raise invalid_argument(f"a board has at most {MAX_WEBHOOKS} webhooks", field="url")
        secret = new_secret()
        webhook = Webhook.objects.create(
            project=project,
            url=checked_url,
            events=checked_events,
            secret=secret,
            created_by=actor,
        )
        hooked_projects_changed()
    return webhook, secret


def webhook_delete(*, actor: Any, project_id: UUID, webhook_id: int) -> None:
    _webhook(_owned(actor, project_id), webhook_id).delete()
    hooked_projects_changed()


def webhooks_of_board(*, actor: Any, project_id: UUID) -> list[WebhookView]:
    """The board's webhooks, each with its newest deliveries (the page's log)."""
    project = _owned(actor, project_id)
    return [
        WebhookView(webhook, list(webhook.deliveries.all()[:LOG_SHOWN]))
        for webhook in Webhook.objects.filter(project=project)
    ]


def webhook_test(*, actor: Any, project_id: UUID, webhook_id: int) -> WebhookDelivery:
    """Send a ``ping`` now, even to a webhook that was turned off: if it is answered, the
    webhook is on again."""
    project = _owned(actor, project_id)
    webhook = _webhook(project, webhook_id)
    data = {"message": f"A test from {actor.get_username()}"}
    (delivery,) = _deliveries(project, [webhook], WebhookEvent.PING, data, actor=actor)
    return delivery


def webhook_event_send(
    *, project_id: UUID, event: WebhookEvent, data: dict[str, Any], actor: Any = None
) -> list[WebhookDelivery]:
    """One delivery for each webhook of the board that is on and hears ``event``, queued
    for the worker once the current transaction commits."""
    hooks = [
        hook
        for hook in Webhook.objects.filter(project_id=project_id, active=True)
        if event in hook.events
    ]
    project = Project.objects.filter(pk=project_id).first()
    if not hooks or project is None:
        return []
    return _deliveries(project, hooks, event, data, actor=actor)


def _deliveries(
    project: Project,
    hooks: list[Webhook],
    event: WebhookEvent,
    data: dict[str, Any],
    *,
    actor: Any,
) -> list[WebhookDelivery]:
    from kanban.webhooks.delivery import webhook_deliver_task

    made = []
    now = timezone.now()
    for hook in hooks:
        delivery = WebhookDelivery(webhook=hook, event=event)
        delivery.body = json.dumps(
            {
                "id": str(delivery.id),
                "event": str(event),
                "createdAt": now.isoformat().replace("+00:00", "Z"),
                "board": {"id": str(project.id), "name": project.name},
                "actor": actor if isinstance(actor, str) or actor is None else actor.get_username(),
                "data": data,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )
        delivery.save(force_insert=True)
        made.append(delivery)
        _forget_old(hook)
        transaction.on_commit(functools.partial(webhook_deliver_task.enqueue, str(delivery.id)))
    return made


def _forget_old(hook: Webhook) -> None:
    newest = WebhookDelivery.objects.filter(webhook=hook).order_by("-created_at")
    oldest_kept = list(newest.values_list("created_at", flat=True)[LOG_KEPT - 1 : LOG_KEPT])
    if oldest_kept:
        WebhookDelivery.objects.filter(webhook=hook, created_at__lt=oldest_kept[0]).delete()
