"""Outgoing webhooks: a board's owner names a URL and the events it hears; each event sent
is a delivery, logged with its tries, for the board's webhooks page."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class WebhookEvent(models.TextChoices):
    CARD_ADDED = "card.added", "Card added"
    CARD_MOVED = "card.moved", "Card moved"
    CARD_CHANGED = "card.changed", "Card changed"
    CARD_ARCHIVED = "card.archived", "Card archived"
    CARD_COMMENTED = "card.commented", "Comment added"
    MEMBER_JOINED = "member.joined", "Member joined"
    MEMBER_LEFT = "member.left", "Member left"
    #: Sent only by the page's "Send test"; never subscribed to.
    PING = "ping", "Test"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    RETRYING = "retrying"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class Webhook(models.Model):
    project = models.ForeignKey("kanban.Project", on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=2000)
    #: The ``WebhookEvent`` values it hears (never ``ping``).
    events = models.JSONField(default=list)
    #: Signs every delivery (HMAC-SHA256); the receiver keeps a copy. Kept readable: signing
    #: needs it, unlike a token's, which is only compared.
    secret = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    active = models.BooleanField(default=True)
    #: Tries that failed since the last that succeeded: at KANBAN_WEBHOOK_DISABLE_AFTER it is
    #: turned off (``disabled_at``) and its owners told.
    failures_in_row = models.PositiveIntegerField(default=0)
    disabled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.url} ({self.project_id})"


class WebhookDelivery(models.Model):
    #: Sent as X-Kanban-Delivery and the payload's ``id``: a receiver drops a repeat by it.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=32, choices=WebhookEvent.choices)
    #: The JSON body exactly as sent (and signed), the same on every try.
    body = models.TextField()
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    response_code = models.PositiveIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["webhook", "created_at"])]

    def __str__(self) -> str:
        return f"{self.event} to {self.webhook_id}: {self.status}"
