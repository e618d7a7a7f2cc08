"""Named configurations: each user's own saved views of a kanban board.

Per user and per board: create, rename, change values, duplicate, delete and switch. At
most one stored configuration is active; none active means the built-in default
(``{id: "", name: "Default", values}``). The default cannot be renamed or deleted, but its
values are the user's own like any other's (a plugin keeps its per-user view there): they
live in a row with the empty name, which no user-made configuration can have, and which
no list, count or lookup by id ever sees.

Users never see each other's configurations. Every lookup is by (user, board, id), so an
id that belongs to someone else and an id that never existed fail identically: the same
``not_found`` with the same message, raised at the same point. Arguments are validated
before any lookup, so a malformed request cannot probe for ids either.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, Final
from uuid import UUID

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.db.models.functions import Lower

from kanban.models import Configuration, Project
from kanban.projects.boards import access_board
from storage import jsoncodec
from storage.errors import ErrorCode, KanbanError, invalid_argument

MAX_NAME_LENGTH: Final = 100
MAX_VALUES_BYTES: Final = 64 * 1024
#: Per user and board; a picker with more entries than this is no longer a picker.
MAX_CONFIGURATIONS: Final = 100
DEFAULT_ID: Final = ""
DEFAULT_NAME: Final = "Default"


class _Unset(Enum):
    UNSET = "unset"


#: An argument that was not given (``None`` would be a value to validate, and refuse).
UNSET: Final = _Unset.UNSET


@dataclass(frozen=True, slots=True)
class NamedConfiguration:
    """A configuration as callers see it; the default one has id ``""`` and no times."""

    id: str
    name: str
    values: dict[str, Any]
    active: bool
    created_at: datetime | None = None
    updated_at: datetime | None = None

    def for_bridge(self) -> dict[str, Any]:
        """What the host hands the plugin: exactly ``{id, name, values}``."""
        return {"id": self.id, "name": self.name, "values": self.values}


def _default(user: Any, project: Project, *, active: bool) -> NamedConfiguration:
    text = _default_row(user, project).values_list("values_json", flat=True).first()
    values = {} if text is None else jsoncodec.decode(text)
    return NamedConfiguration(id=DEFAULT_ID, name=DEFAULT_NAME, values=values, active=active)


# --- validation ------------------------------------------------------------------------------


def check_configuration_name(name: object) -> str:
    """1 to 100 characters once surrounding spaces are trimmed, no control characters, and
    not "Default", which would be indistinguishable from the built-in one in a picker."""
    if not isinstance(name, str):
        raise invalid_argument("name must be a string", field="name")
    if len(name) > MAX_NAME_LENGTH:
        raise invalid_argument(f"name is longer than {MAX_NAME_LENGTH} characters", field="name")
    name = name.strip()
    if not name:
        raise invalid_argument("name must not be empty", field="name")
    if any(unicodedata.category(char) in {"Cc", "Cs"} for char in name):
        raise invalid_argument("name must not contain control characters", field="name")
    if name.casefold() == DEFAULT_NAME.casefold():
        raise invalid_argument(
            f"{DEFAULT_NAME!r} is the name of the built-in configuration", field="name"
        )
    return name


def check_configuration_values(values: object) -> str:
    """A JSON object of at most 64 KiB; returns its canonical text."""
    if not isinstance(values, dict):
        raise invalid_argument("values must be a JSON object", field="values")
    try:
        return jsoncodec.encode(values, max_bytes=MAX_VALUES_BYTES)
    except KanbanError as error:
        error.details.setdefault("field", "values")
        raise


def _configuration_id(configuration_id: object) -> UUID | None:
    """The stored id named by the caller; None for the default configuration."""
    if configuration_id == DEFAULT_ID:
        return None
    if isinstance(configuration_id, UUID):
        return configuration_id
    try:
        return UUID(str(configuration_id))
    except ValueError:
        # Not an id we could ever have issued: the same answer as for anyone else's id.
        raise _not_found() from None


def _not_found() -> KanbanError:
    return KanbanError(ErrorCode.NOT_FOUND, "no such configuration")


# --- lookups ---------------------------------------------------------------------------------


def _owned(user: Any, project: Project) -> QuerySet[Configuration]:
    """The user's named configurations on this board (never the default's row)."""
    return Configuration.objects.filter(user_id=user.pk, project=project).exclude(name="")


def _default_row(user: Any, project: Project) -> QuerySet[Configuration]:
    return Configuration.objects.filter(user_id=user.pk, project=project, name="")


def access_configuration(*, user: Any, project: Project, configuration_id: UUID) -> Configuration:
    """The user's own configuration on this board, or ``not_found``."""
    row = _owned(user, project).filter(pk=configuration_id).first()
    if row is None:
        raise _not_found()
    return row


def _view(row: Configuration) -> NamedConfiguration:
    return NamedConfiguration(
        id=str(row.id),
        name=row.name,
        values=jsoncodec.decode(row.values_json),
        active=row.is_active,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _lock_owner(user: Any) -> None:
    """Serialize one user's configuration changes, so the name and single-active checks
    cannot race between two tabs. On SQLite the IMMEDIATE transaction already does."""
    list(get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk"))


def _check_name_free(owned: QuerySet[Configuration], name: str) -> None:
    if owned.filter(name=name).exists():
        raise KanbanError(
            ErrorCode.CONFLICT, f"you already have a configuration named {name!r}", field="name"
        )


def _check_room(owned: QuerySet[Configuration]) -> None:
    if owned.count() >= MAX_CONFIGURATIONS:
        raise KanbanError(
            ErrorCode.TOO_LARGE,
            f"a board keeps at most {MAX_CONFIGURATIONS} configurations per person",
            limit=MAX_CONFIGURATIONS,
        )


def _copy_name(name: str, taken: set[str]) -> str:
    """``"<name> (copy)"``, then ``(copy 2)``, ...; shortened to fit the length limit."""
    for number in range(1, MAX_CONFIGURATIONS + 2):
        suffix = " (copy)" if number == 1 else f" (copy {number})"
        candidate = name[: MAX_NAME_LENGTH - len(suffix)].rstrip() + suffix
        if candidate not in taken:
            return candidate
    raise AssertionError("more names taken than configurations allowed")  # pragma: no cover


# --- services --------------------------------------------------------------------------------


def configuration_list(*, user: Any, project_id: UUID) -> list[NamedConfiguration]:
    """The default first, then the user's own configurations by name; one is ``active``."""
    project = access_board(user=user, project_id=project_id)
    stored = [_view(row) for row in _owned(user, project).order_by(Lower("name"), "name", "pk")]
    default = _default(user, project, active=not any(item.active for item in stored))
    return [default, *stored]


def configuration_active(*, user: Any, project_id: UUID) -> NamedConfiguration:
    """The configuration the board opens with."""
    project = access_board(user=user, project_id=project_id)
    return _active(user, project)


def _active(user: Any, project: Project) -> NamedConfiguration:
    row = _owned(user, project).filter(is_active=True).first()
    return _default(user, project, active=True) if row is None else _view(row)


def configuration_get(
    *, user: Any, project_id: UUID, configuration_id: object
) -> NamedConfiguration:
    project = access_board(user=user, project_id=project_id)
    pk = _configuration_id(configuration_id)
    if pk is None:
        active = not _owned(user, project).filter(is_active=True).exists()
        return _default(user, project, active=active)
    return _view(access_configuration(user=user, project=project, configuration_id=pk))


def configuration_create(
    *, user: Any, project_id: UUID, name: object, values: object = UNSET
) -> NamedConfiguration:
    """A new, inactive configuration (``values`` default to ``{}``)."""
    project = access_board(user=user, project_id=project_id)
    name = check_configuration_name(name)
    text = check_configuration_values({} if values is UNSET else values)
    with transaction.atomic():
        _lock_owner(user)
        owned = _owned(user, project)
        _check_room(owned)
        _check_name_free(owned, name)
        row = Configuration.objects.create(user=user, project=project, name=name, values_json=text)
    return _view(row)


def configuration_update(
    *,
    user: Any,
    project_id: UUID,
    configuration_id: object,
    name: object = UNSET,
    values: object = UNSET,
    alias: str | None = None,
) -> NamedConfiguration:
    """Rename and/or replace the values of one of the user's configurations. A plugin
    reaching a related board (``alias``) may not: what someone chose to see on a board is
    theirs on that board, and the related board's plugin shows its own."""
    if alias is not None:
        raise invalid_argument("a configuration belongs to this board", field="alias")
    project = access_board(user=user, project_id=project_id)
    new_name = None if name is UNSET else check_configuration_name(name)
    text = None if values is UNSET else check_configuration_values(values)
    pk = _configuration_id(configuration_id)
    if pk is None:
        if new_name is not None:
            raise KanbanError(
                ErrorCode.BUILT_IN, f"the {DEFAULT_NAME} configuration cannot be renamed"
            )
        if text is not None:
            _default_values_set(user, project, text)
        return configuration_get(user=user, project_id=project_id, configuration_id=DEFAULT_ID)
    with transaction.atomic():
        _lock_owner(user)
        row = access_configuration(user=user, project=project, configuration_id=pk)
        changed: list[str] = []
        if new_name is not None and new_name != row.name:
            _check_name_free(_owned(user, project).exclude(pk=row.pk), new_name)
            row.name = new_name
            changed.append("name")
        if text is not None and text != row.values_json:
            row.values_json = text
            changed.append("values_json")
        if changed:
            row.save(update_fields=[*changed, "updated_at"])
    return _view(row)


def _default_values_set(user: Any, project: Project, text: str) -> None:
    with transaction.atomic():
        _lock_owner(user)
        updated = _default_row(user, project).update(values_json=text)
        if not updated:
            Configuration.objects.create(user=user, project=project, name="", values_json=text)


def configuration_duplicate(
    *, user: Any, project_id: UUID, configuration_id: object, name: object = UNSET
) -> NamedConfiguration:
    """A new, inactive copy of a configuration's values (the default's are ``{}``), named
    ``name`` or ``"<original> (copy)"``."""
    project = access_board(user=user, project_id=project_id)
    new_name = None if name is UNSET else check_configuration_name(name)
    pk = _configuration_id(configuration_id)
    with transaction.atomic():
        _lock_owner(user)
        if pk is None:
            source_name = DEFAULT_NAME
            text = _default_row(user, project).values_list("values_json", flat=True).first() or "{}"
        else:
            source = access_configuration(user=user, project=project, configuration_id=pk)
            source_name, text = source.name, source.values_json
        owned = _owned(user, project)
        _check_room(owned)
        if new_name is None:
            new_name = _copy_name(source_name, set(owned.values_list("name", flat=True)))
        else:
            _check_name_free(owned, new_name)
        row = Configuration.objects.create(
            user=user, project=project, name=new_name, values_json=text
        )
    return _view(row)


def configuration_delete(
    *, user: Any, project_id: UUID, configuration_id: object
) -> NamedConfiguration:
    """Delete one of the user's configurations; returns the active one afterwards, which is
    the default when the deleted one was active."""
    project = access_board(user=user, project_id=project_id)
    pk = _configuration_id(configuration_id)
    if pk is None:
        raise KanbanError(ErrorCode.BUILT_IN, f"the {DEFAULT_NAME} configuration cannot be deleted")
    with transaction.atomic():
        _lock_owner(user)
        access_configuration(user=user, project=project, configuration_id=pk).delete()
        return _active(user, project)


def configuration_activate(
    *, user: Any, project_id: UUID, configuration_id: object
) -> NamedConfiguration:
    """Make a configuration (``""``: the default) the one the board opens with."""
    project = access_board(user=user, project_id=project_id)
    pk = _configuration_id(configuration_id)
    with transaction.atomic():
        _lock_owner(user)
        row = None
        if pk is not None:
            row = access_configuration(user=user, project=project, configuration_id=pk)
        # Clear before setting: the database allows one active row per user and board.
        # Queryset updates, so a switch does not count as editing (updated_at stays).
        others = _owned(user, project).filter(is_active=True)
        if row is not None:
            others = others.exclude(pk=row.pk)
        others.update(is_active=False)
        if row is None:
            return _default(user, project, active=True)
        if not row.is_active:
            _owned(user, project).filter(pk=row.pk).update(is_active=True)
            row.is_active = True
    return _view(row)
