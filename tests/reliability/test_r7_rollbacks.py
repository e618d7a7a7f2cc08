"""R7: a rolled-back write publishes nothing, 1,000 times over: neither a storage change
event nor a channel-layer message reaches anyone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from django.db import transaction

from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from storage import events
from storage.errors import Conflict, KanbanError
from tests.api.conftest import People

pytestmark = pytest.mark.django_db(transaction=True)
TRIALS = 1000


class Boom(Exception):
    pass


def test_a_thousand_forced_rollbacks_publish_no_event(
    people: People, board: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kanban.bridge import publish

    published: list[Sequence[events.Change]] = []
    layer_messages: list[Any] = []
    remove = events.CHANGES.listen(published.append)
    monkeypatch.setattr(
        publish, "_group_send", lambda group, message: layer_messages.append(message)
    )
    provenance = Provenance(via="api")
    try:
        for n in range(TRIALS):
            kind = n % 3
            try:
                with transaction.atomic():
                    if kind == 0:  # an exception after the write
                        project_kv_set(
                            target=Target(user=people.bob, project_id=board.id),
                            key=f"k{n}",
                            value=n,
                            provenance=provenance,
                        )
                        raise Boom
                    if kind == 1:  # a compare-and-set that fails
                        project_kv_set(
                            target=Target(user=people.bob, project_id=board.id),
                            key="cas",
                            value=n,
                            provenance=provenance,
                            expected_revision="999999999",
                        )
                    else:  # invalid input, refused before anything is written
                        project_kv_set(
                            target=Target(user=people.bob, project_id=board.id),
                            key="bad",
                            value=float("nan"),
                            provenance=provenance,
                        )
            except (Boom, Conflict, KanbanError):
                pass
    finally:
        remove()
    print(
        f"\nR7: {TRIALS} forced rollbacks -> {len(published)} storage events, "
        f"{len(layer_messages)} layer messages"
    )
    assert published == [] and layer_messages == []
    # and the control: one committed write is heard exactly once
    remove = events.CHANGES.listen(published.append)
    try:
        project_kv_set(
            target=Target(user=people.bob, project_id=board.id),
            key="ok",
            value=1,
            provenance=provenance,
        )
    finally:
        remove()
    assert len(published) == 1
