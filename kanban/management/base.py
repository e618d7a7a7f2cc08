"""What every command of this product shares: its module's docstring is its ``--help``, so
the two cannot say different things; a refusal from a service (``KanbanError``) is told as
its message and exit status 1, never as a traceback. Commands that add to the message (what
was left undone) catch it themselves first."""

from __future__ import annotations

import inspect
import sys
from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError, CommandParser

from storage.errors import KanbanError


class KanbanCommand(BaseCommand):
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.help = inspect.cleandoc(sys.modules[cls.__module__].__doc__ or "")

    def execute(self, *args: Any, **options: Any) -> str | None:
        try:
            return super().execute(*args, **options)
        except KanbanError as error:
            raise CommandError(error.message) from None


def add_project_id(parser: CommandParser) -> None:
    parser.add_argument("project_id", type=UUID, help="the project's UUID")
