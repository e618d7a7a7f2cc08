from __future__ import annotations

from typing import Any

from django.db import migrations

from storage.backends import dialect_for


def create(apps: Any, schema_editor: Any) -> None:
    for statement in dialect_for(schema_editor.connection.vendor).create_statements:
        schema_editor.execute(statement)


def drop(apps: Any, schema_editor: Any) -> None:
    for statement in dialect_for(schema_editor.connection.vendor).drop_statements:
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    initial = True
    # The tables are created from the dialect (one source of DDL per backend) rather than
    # from models: the engine reads them with raw SQL and they need a "C" collation and
    # WITHOUT ROWID, which model fields cannot say.
    operations = [migrations.RunPython(create, drop)]
