from __future__ import annotations

from typing import Any

from django.db import migrations

from storage import usage
from storage.backends import dialect_for
from storage.engine import driver_cursor


def create(apps: Any, schema_editor: Any) -> None:
    for statement in dialect_for(schema_editor.connection.vendor).usage_statements:
        schema_editor.execute(statement)
    with driver_cursor(schema_editor.connection.alias) as (dialect, cursor):
        usage.recount(dialect, cursor)


def drop(apps: Any, schema_editor: Any) -> None:
    schema_editor.execute("DROP TABLE IF EXISTS storage_usage")


class Migration(migrations.Migration):
    """Each project's stored bytes, counted once here from what it holds and kept by every
    write since. Idempotent: a store made after this migration existed creates the table
    with the others (0001)."""

    dependencies = [("storage", "0002_value_history")]
    operations = [migrations.RunPython(create, drop)]
