"""The settings ``manage.py restore`` runs with in bench I2: the project's, the attachments'
files in an empty folder of their own (``KANBAN_BENCH_ATTACHMENTS``), as on the fresh
deployment a restore is made for (the project's folder holds the bench database's files)."""

from __future__ import annotations

import os

from kanban.settings import *  # noqa: F403
from kanban.settings import STORAGES

STORAGES = {
    **STORAGES,
    "attachments": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": os.environ["KANBAN_BENCH_ATTACHMENTS"]},
    },
}
