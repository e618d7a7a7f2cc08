"""The settings of bench I2's deployments (the one backed up, the one restored into): the
project's, with the attachments' files in a folder of their own (``KANBAN_BENCH_ATTACHMENTS``)
beside a database of their own, so each is a whole deployment and nothing else (the project's
folder holds the bench database's files)."""

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
