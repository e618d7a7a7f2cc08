"""``manage.py due_reminders``: tells each assignee of a card due tomorrow, and of a card
overdue, once (kanban/data/board/reminders.py). Run it once a day (cron, beside
``email_digests`` and ``prune``); a second run the same day sends nothing new. Mail leaves
through the worker, as every mail does."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from kanban.data.board.reminders import due_reminders_send


class Command(BaseCommand):
    help = "Remind assignees of cards due tomorrow and of overdue cards, once each."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(f"Sent {due_reminders_send()} due-date reminders.")
