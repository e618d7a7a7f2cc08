"""``manage.py prune``: delete what the product keeps only for a while. Run it daily (cron, a
systemd timer): nothing else deletes these."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from kanban.data.notifications import notifications_prune
from storage.kv import kv_history_prune


class Command(BaseCommand):
    help = (
        "Delete kept versions older than KANBAN_HISTORY_DAYS and notifications older than "
        "KANBAN_NOTIFICATION_DAYS, and say how many went."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        versions = kv_history_prune()
        notifications = notifications_prune()
        self.stdout.write(
            f"Deleted {versions} kept versions older than {settings.KANBAN_HISTORY_DAYS} days "
            f"and {notifications} notifications older than "
            f"{settings.KANBAN_NOTIFICATION_DAYS} days."
        )
