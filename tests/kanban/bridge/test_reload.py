"""A re-imported plugin reloads its open boards: every bridge socket of that board gets one
host-only ``reload`` event per new version of the plugin, and other boards hear nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from channels.db import database_sync_to_async

from kanban.access.memberships import membership_set
from kanban.models import Project
from kanban.projects.packages import project_import
from kanban.projects.plugin_workflow import plugin_start
from tests.factories import a_user
from tests.kanban.bridge.test_consumer import Bridge, open_bridge

pytestmark = pytest.mark.django_db(transaction=True)


def two_boards(tmp_path: Path) -> tuple[Any, Project, Project, Path]:
    alice = a_user("alice")
    counter = plugin_start(name="Counter", path=tmp_path / "counter")
    board = project_import(path=counter)
    other = project_import(path=plugin_start(name="Other", path=tmp_path / "other"))
    for project in (board, other):
        membership_set(user=alice, project=project, role="developer")
    return alice, board, other, counter


async def test_every_open_socket_of_the_board_reloads_once_per_change(tmp_path: Path) -> None:
    alice, board, other, folder = await database_sync_to_async(two_boards)(tmp_path)
    sockets = []
    for project in (board, board, other):
        communicator, connected, _ = await open_bridge(project, alice)
        assert connected
        sockets.append(Bridge(communicator))
    first, second, elsewhere = sockets

    await database_sync_to_async(project_import)(path=folder)  # identical: nothing to load
    assert await first.no_message(0.3)

    (folder / "app.js").write_text("// a new version\n")
    await database_sync_to_async(project_import)(path=folder)
    assert await first.event() == {"v": 1, "event": "reload"}
    assert await second.event() == {"v": 1, "event": "reload"}
    # The group message and the in-memory layer's poll report one version once.
    assert await first.no_message(1.5)
    assert await elsewhere.no_message(0.1)
    for bridge in sockets:
        await bridge.communicator.disconnect()
