"""Whose data a call reaches: one value instead of five loose arguments that always travel
together, so a misspelt or forgotten one is mypy's to catch rather than a runtime
``KeyError`` (or, worse, a default silently taken)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from storage.namespaces import Domain


@dataclass(frozen=True, slots=True)
class Target:
    """``user`` asks, from the page of ``project_id`` (the consumer project); ``alias``
    names a related project to reach instead (None: the project itself). ``domain`` and
    ``conversation_id`` pick the dataset within it: a related project offers its
    project-scope KV only, which ``kanban.data.kv`` decides."""

    user: Any
    project_id: UUID
    alias: str | None = None
    domain: Domain = "kv"
    conversation_id: str | None = None
