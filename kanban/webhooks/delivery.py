"""Posting a delivery, in the background worker (django-tasks' database backend, as the
imports are): one try per task run. A try that fails is queued again after a gap that
doubles each time (``KANBAN_WEBHOOK_BACKOFF_SECONDS`` x 1, 2, 4...), at most
``KANBAN_WEBHOOK_ATTEMPTS`` tries; after ``KANBAN_WEBHOOK_DISABLE_AFTER`` failed tries in a
row the webhook is turned off and the board's owners are told in their inbox.

The request connects to the address ``addresses.webhook_target`` checked, sends the host's
name for the Host header and TLS, follows no redirect and reads at most a little of the
answer: 2xx is delivered, anything else (3xx included) is a failure."""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Final
from uuid import UUID

import urllib3
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django_tasks import task
from django_tasks_db.models import DBTaskResult

from kanban.data.notifications import notifications_deliver
from kanban.models import (
    DeliveryStatus,
    Membership,
    Notification,
    Role,
    Webhook,
    WebhookDelivery,
    WebhookEvent,
)
from kanban.webhooks.addresses import Target, webhook_target
from kanban.webhooks.hooked import hooked_projects_changed
from kanban.webhooks.signing import SIGNATURE_HEADER, signature_header
from storage.errors import KanbanError

logger = logging.getLogger(__name__)

CONNECT_SECONDS: Final = 5.0
READ_SECONDS: Final = 10.0
USER_AGENT: Final = "Kanban-Webhooks/1"
#: Of an answer that is not 2xx, this much goes into the log (the receiver's reason).
ANSWER_SHOWN: Final = 200


class _Failed(Exception):
    def __init__(self, message: str, *, code: int | None = None, retry: bool = True) -> None:
        super().__init__(message)
        self.code = code
        self.retry = retry


@task()
def webhook_deliver_task(delivery_id: str) -> None:
    """One try of one delivery (``kanban.webhooks.service`` queues it)."""
    webhook_deliver(delivery_id=UUID(delivery_id))


def webhook_deliver(*, delivery_id: UUID) -> None:
    delivery = WebhookDelivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None or delivery.status in {DeliveryStatus.SUCCEEDED, DeliveryStatus.FAILED}:
        return  # the webhook was deleted, or a second run of a finished delivery
    webhook = delivery.webhook
    if not webhook.active and delivery.event != WebhookEvent.PING:
        _end(delivery, DeliveryStatus.FAILED, error="not sent: the webhook was turned off")
        return
    attempts = delivery.attempts + 1
    try:
        code = _post(webhook, delivery)
    except _Failed as failed:
        _failed(delivery, attempts, failed)
        return
    with transaction.atomic():
        _end(delivery, DeliveryStatus.SUCCEEDED, attempts=attempts, response_code=code)
        # Answered: the webhook is healthy again (and on again, after a test that got through).
        Webhook.objects.filter(pk=webhook.pk).update(
            failures_in_row=0, active=True, disabled_at=None
        )
        if not webhook.active:
            hooked_projects_changed()


def _post(webhook: Webhook, delivery: WebhookDelivery) -> int:
    try:
        target = webhook_target(webhook.url)
    except KanbanError as refused:
        # An address the operator does not allow stays so: no retry changes that.
        raise _Failed(refused.message, retry=refused.details.get("reason") != "address") from None
    body = delivery.body.encode("utf-8")
    timestamp = int(time.time())
    headers = {
        "Host": _host_header(target),
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Kanban-Event": delivery.event,
        "X-Kanban-Delivery": str(delivery.id),
        SIGNATURE_HEADER: signature_header(secret=webhook.secret, timestamp=timestamp, body=body),
    }
    timeout = urllib3.Timeout(connect=CONNECT_SECONDS, read=READ_SECONDS)
    pool: urllib3.HTTPConnectionPool
    if target.scheme == "https":
        pool = urllib3.HTTPSConnectionPool(
            target.ip,
            target.port,
            timeout=timeout,
            retries=False,
            server_hostname=target.host,
            assert_hostname=target.host,
        )
    else:
        pool = urllib3.HTTPConnectionPool(target.ip, target.port, timeout=timeout, retries=False)
    try:
        with pool:
            response = pool.urlopen(
                "POST",
                target.path,
                body=body,
                headers=headers,
                redirect=False,
                retries=False,
                preload_content=False,
            )
            answer = response.read(ANSWER_SHOWN, decode_content=False)
            response.release_conn()
    except urllib3.exceptions.HTTPError as error:
        raise _Failed(f"could not post to {target.host} ({target.ip}): {error}"[:500]) from None
    if 200 <= response.status < 300:
        return response.status
    said = answer.decode("utf-8", "replace").strip()
    raise _Failed(
        f"answered {response.status}{': ' + said if said else ''}"[:500], code=response.status
    )


def _host_header(target: Target) -> str:
    host = f"[{target.host}]" if ":" in target.host else target.host
    default = 443 if target.scheme == "https" else 80
    return host if target.port == default else f"{host}:{target.port}"


def _end(delivery: WebhookDelivery, status: DeliveryStatus, **fields: object) -> None:
    now = timezone.now()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=status, last_attempt_at=now, next_attempt_at=None, **fields
    )


def backoff(attempts: int) -> timedelta:
    """The gap after the ``attempts``-th failed try: base, then twice as long each time."""
    return timedelta(seconds=settings.KANBAN_WEBHOOK_BACKOFF_SECONDS * 2 ** (attempts - 1))


def _failed(delivery: WebhookDelivery, attempts: int, failed: _Failed) -> None:
    now = timezone.now()
    again = failed.retry and attempts < settings.KANBAN_WEBHOOK_ATTEMPTS
    with transaction.atomic():
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            status=DeliveryStatus.RETRYING if again else DeliveryStatus.FAILED,
            attempts=attempts,
            response_code=failed.code,
            error=str(failed)[:500],
            last_attempt_at=now,
            next_attempt_at=now + backoff(attempts) if again else None,
        )
        Webhook.objects.filter(pk=delivery.webhook_id).update(
            failures_in_row=F("failures_in_row") + 1
        )
        _turn_off_if_failing(delivery.webhook_id)
        if again:
            retry = webhook_deliver_task
            if retry.get_backend().supports_defer:
                retry = retry.using(run_after=now + backoff(attempts))
            transaction.on_commit(lambda: retry.enqueue(str(delivery.pk)))
    logger.info("webhook delivery %s failed (try %d): %s", delivery.pk, attempts, failed)


def _turn_off_if_failing(webhook_id: int) -> None:
    limit = settings.KANBAN_WEBHOOK_DISABLE_AFTER
    turned_off = Webhook.objects.filter(
        pk=webhook_id, active=True, failures_in_row__gte=limit
    ).update(active=False, disabled_at=timezone.now())
    if not turned_off:
        return
    hooked_projects_changed()
    webhook = Webhook.objects.get(pk=webhook_id)
    owners = list(
        Membership.objects.filter(project_id=webhook.project_id, role=Role.OWNER).values_list(
            "user_id", flat=True
        )
    )
    text = (
        f"The webhook to {webhook.url} was turned off after {limit} failed deliveries in a "
        "row. Fix the receiver, then use Send test on the board's webhooks page to turn it on."
    )
    notifications_deliver(
        notifications=[
            Notification(
                user_id=user_id, project_id=webhook.project_id, text=text[:500], via="webhooks"
            )
            for user_id in owners
        ]
    )


def webhook_deliveries_resume() -> int:
    """Tries a worker was running when it stopped without ending them (killed, the machine
    went down) are queued again; answers how many. Only where no other worker may be running
    one: the embedded default's worker calls it as it starts, beside the imports' own."""
    interrupted = RuntimeError("the worker stopped while running this task")
    queued = 0
    running = DBTaskResult.objects.running().filter(task_path=webhook_deliver_task.module_path)
    for result in running:
        result.set_failed(interrupted)
        args = (result.args_kwargs or {}).get("args") or []
        if args and isinstance(args[0], str):
            webhook_deliver_task.enqueue(args[0])
            queued += 1
    return queued
