from __future__ import annotations

from django.apps import AppConfig


class KanbanConfig(AppConfig):
    name = "kanban"
    label = "kanban"
    verbose_name = "Kanban"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from kanban.bridge import wiring
        from kanban.webhooks import events as webhook_events

        wiring.connect()
        webhook_events.connect()
