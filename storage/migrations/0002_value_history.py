from __future__ import annotations

from typing import Any

from django.db import migrations

from storage.backends import dialect_for


def create(apps: Any, schema_editor: Any) -> None:
    for statement in dialect_for(schema_editor.connection.vendor).history_statements:
        schema_editor.execute(statement)


def drop(apps: Any, schema_editor: Any) -> None:
    schema_editor.execute("DROP TABLE IF EXISTS value_history")


class Migration(migrations.Migration):
    """Every kept version of a value (the history each write keeps). Idempotent: a store
    made after this migration existed creates the table with the others (0001)."""

    dependencies = [("storage", "0001_initial")]
    operations = [migrations.RunPython(create, drop)]
