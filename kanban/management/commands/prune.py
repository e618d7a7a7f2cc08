"""Delete what the product keeps only for a while: kept versions older than KANBAN_HISTORY_DAYS,
notifications older than KANBAN_NOTIFICATION_DAYS, sent emails' rows older than 30 days, and
what deleted projects left; say how many went. Run it daily (cron, a systemd timer): nothing
else deletes these."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from kanban.data.notifications import notifications_prune
from kanban.jobs.email import emails_prune
from kanban.management.base import KanbanCommand
from kanban.models import Project
from storage.kv import kv_erase_project, kv_history_prune, kv_stored_project_ids


class Command(KanbanCommand):
    def handle(self, *args: Any, **options: Any) -> None:
        versions = kv_history_prune()
        notifications = notifications_prune()
        self.stdout.write(
            f"Deleted {versions} kept versions older than {settings.KANBAN_HISTORY_DAYS} days "
            f"and {notifications} notifications older than "
            f"{settings.KANBAN_NOTIFICATION_DAYS} days."
        )
        emails = emails_prune()
        if emails:
            self.stdout.write(f"Deleted {emails} sent emails' rows older than 30 days.")
        # Before deletes and writes were serialised, a write racing a delete could outlive
        # it; a project re-imported under that id would inherit what it left.
        orphans = kv_stored_project_ids() - set(Project.objects.values_list("id", flat=True))
        if orphans:
            rows = sum(kv_erase_project(project_id=project_id) for project_id in orphans)
            self.stdout.write(f"Erased what {len(orphans)} deleted projects left ({rows} rows).")
