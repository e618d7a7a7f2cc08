"""The Django models' rows as JSONL archive parts: which models, in what order, and each row
as one canonical line (so the same rows give the same bytes on SQLite and on PostgreSQL).

Every model the app registry knows is backed up unless ``EXCLUDED`` says why not, so a model
added later travels without anyone remembering to list it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from datetime import date, datetime, time
from decimal import Decimal
from graphlib import TopologicalSorter
from typing import Any
from uuid import UUID

from django.apps import apps
from django.core import serializers
from django.db import models

#: Models whose rows a backup leaves out, and why.
EXCLUDED: dict[str, str] = {
    "sessions.session": "people sign in again after a restore",
    "contenttypes.contenttype": "made by migrate; rows refer to them by natural key",
    "auth.permission": "made by migrate; rows refer to them by natural key",
}

_CHUNK = 500


def model_label(model: type[models.Model]) -> str:
    return model._meta.label_lower


def backed_up_models() -> list[type[models.Model]]:
    """Every concrete model not in ``EXCLUDED``, each after the models it refers to (a row
    naming a user by username needs that user loaded first)."""
    chosen = {
        model_label(model): model
        for model in apps.get_models()
        if model._meta.managed and not model._meta.proxy and model_label(model) not in EXCLUDED
    }
    graph: TopologicalSorter[str] = TopologicalSorter()
    for label, model in sorted(chosen.items()):
        targets = {
            model_label(field.related_model)
            for field in model._meta.get_fields()
            if field.concrete and field.is_relation and isinstance(field.related_model, type)
        }
        graph.add(
            label, *sorted(target for target in targets if target in chosen and target != label)
        )
    return [chosen[label] for label in graph.static_order()]


def _encode(value: Any) -> Any:
    # Full precision, unlike DjangoJSONEncoder, which cuts datetimes to milliseconds.
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, UUID | Decimal):
        return str(value)
    if isinstance(value, bytes | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def row_lines(model: type[models.Model], *, using: str) -> Iterator[str]:
    """Each row of ``model`` as one line, by primary key; relations to users, content types
    and permissions by natural key (their ids differ between databases)."""
    rows = model._default_manager.using(using).order_by("pk").iterator(chunk_size=_CHUNK)
    chunk: list[models.Model] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == _CHUNK:
            yield from _lines(chunk)
            chunk = []
    yield from _lines(chunk)


def _lines(chunk: list[models.Model]) -> Iterator[str]:
    if not chunk:
        return
    for record in serializers.serialize("python", chunk, use_natural_foreign_keys=True):
        text = json.dumps(
            record, default=_encode, ensure_ascii=False, sort_keys=True, separators=(",", ":")
        )
        yield text + "\n"


def rows_load(lines: Iterable[str], *, using: str) -> int:
    """Save each line's row as it was (primary key, timestamps); returns how many."""
    count = 0
    chunk: list[dict[str, Any]] = []
    for line in lines:
        chunk.append(json.loads(line))
        if len(chunk) == _CHUNK:
            count += _save(chunk, using=using)
            chunk = []
    return count + _save(chunk, using=using)


def _save(chunk: list[dict[str, Any]], *, using: str) -> int:
    # Raw saves, as loaddata's: no signals' side effects, auto_now fields keep their values.
    for found in serializers.deserialize("python", chunk, using=using):
        found.save(using=using)
    return len(chunk)


def has_rows(*, using: str) -> list[str]:
    """The backed-up models that hold any row in ``using``."""
    return [
        model_label(model)
        for model in backed_up_models()
        if model._default_manager.using(using).exists()
    ]
