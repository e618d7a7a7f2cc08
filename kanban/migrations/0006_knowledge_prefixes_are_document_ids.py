"""Knowledge prefixes name document ids now (``kb_``), not storage keys
(``knowledge.document.kb_``): rewrite the stored ones so they keep opening what they did."""

from __future__ import annotations

from typing import Any

from django.db import migrations

LEGACY = "knowledge.document."
FIELDS = ("knowledge_read_prefixes", "knowledge_write_prefixes")


def forwards(apps: Any, schema_editor: Any) -> None:
    relationship = apps.get_model("kanban", "Relationship")
    for row in relationship.objects.all():
        changed = False
        for field in FIELDS:
            prefixes = getattr(row, field) or []
            stripped = [p.removeprefix(LEGACY) if isinstance(p, str) else p for p in prefixes]
            if "" in stripped:  # "knowledge.document." itself: every document
                setattr(row, field.replace("_prefixes", "_mode"), "all")
                stripped = []
            if stripped != prefixes:
                setattr(row, field, stripped)
                changed = True
        if changed:
            row.save()


class Migration(migrations.Migration):
    dependencies = [("kanban", "0005_scoped_tokens")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
