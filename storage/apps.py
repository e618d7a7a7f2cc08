from __future__ import annotations

from django.apps import AppConfig


class StorageConfig(AppConfig):
    name = "storage"
    label = "storage"
    verbose_name = "Storage engine"

    def ready(self) -> None:
        from storage import pool_retry

        pool_retry.install()
