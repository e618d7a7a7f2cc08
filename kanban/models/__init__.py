"""The kanban app's models, one module per concern, re-exported for Django."""

from __future__ import annotations
