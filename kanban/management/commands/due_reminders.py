"""Remind each assignee of a card due tomorrow, and of an overdue card, once
(kanban/data/board/reminders.py). Run it once a day (cron, beside email_digests and prune); a
second run the same day sends nothing new. Mail leaves through the worker, as every mail does."""

from __future__ import annotations

from typing import Any

from kanban.data.board.reminders import due_reminders_send
from kanban.management.base import KanbanCommand


class Command(KanbanCommand):
    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(f"Sent {due_reminders_send()} due-date reminders.")
