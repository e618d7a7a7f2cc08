"""Migrations that rewrite stored rows, run on rows written the old way: a migration that
rewrites data is only proven on data it did not write."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("kanban", "0005_scoped_tokens")
AFTER = ("kanban", "0006_knowledge_prefixes_are_document_ids")


@pytest.fixture
def at_0005() -> Iterator[Any]:
    """The database as 0005 left it, and a way on to 0006; migrated to the end afterwards."""
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    executor.loader.build_graph()
    yield executor.loader.project_state([BEFORE]).apps
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_0006_rewrites_storage_key_prefixes_into_document_ids(at_0005: Any) -> None:
    project_model = at_0005.get_model("kanban", "Project")
    relationship_model = at_0005.get_model("kanban", "Relationship")
    board = project_model.objects.create(name="Board")
    rows = {
        "docs": (["knowledge.document.kb_"], ["knowledge.document.kb_notes", "kb_plain"]),
        "everything": (["knowledge.document."], []),
        "untouched": (["kb_"], []),
    }
    for alias, (read, write) in rows.items():
        relationship_model.objects.create(
            project=board,
            alias=alias,
            related_project_id=project_model.objects.create(name=alias).id,
            knowledge_read_mode="prefixes",
            knowledge_read_prefixes=read,
            knowledge_write_mode="prefixes" if write else "none",
            knowledge_write_prefixes=write,
        )

    executor = MigrationExecutor(connection)
    executor.migrate([AFTER])
    migrated = executor.loader.project_state([AFTER]).apps.get_model("kanban", "Relationship")
    got = {
        row.alias: (
            row.knowledge_read_mode,
            row.knowledge_read_prefixes,
            row.knowledge_write_prefixes,
        )
        for row in migrated.objects.all()
    }
    assert got == {
        "docs": ("prefixes", ["kb_"], ["kb_notes", "kb_plain"]),
        "everything": ("all", [], []),
        "untouched": ("prefixes", ["kb_"], []),
    }
