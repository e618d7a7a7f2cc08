"""Queue the daily digest of notifications: one mail to each person who chose it, covering what
came since their last one. Run it once a day (cron, beside prune); a second run the same day
sends nothing new. The mails leave through the worker, as every mail does."""

from __future__ import annotations

from typing import Any

from kanban.accounts.email_notifications import digests_send
from kanban.management.base import KanbanCommand


class Command(KanbanCommand):
    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(f"Queued {digests_send()} digest mails.")
