"""Boards brought in from other tools (``trello``)."""
