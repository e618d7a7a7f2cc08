"""The reliability suite reuses the REST suite's people (alice, bob, charlie, dave) and board."""

from __future__ import annotations

from tests.api.conftest import board, people

__all__ = ["board", "people"]
