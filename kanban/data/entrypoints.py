"""Entrypoints through a relationship: which of the target's entrypoints the consumer may
see, and the refusal to run one. Seed 000: related entrypoints always run locally, from the
target's own directory; the server never starts the target project."""

from __future__ import annotations

from typing import Any, Final, NoReturn
from uuid import UUID

from kanban.access.decision import Op, access_project_data
from kanban.models import Project
from kanban.projects.packages import check_entrypoint_id, declared_entrypoints
from storage.errors import ErrorCode, KanbanError, invalid_argument

MAX_ARGS: Final = 256
MAX_ARG_CHARS: Final = 65_536


def project_entrypoints_list(
    *, user: Any, project_id: UUID, alias: str | None = None
) -> list[dict[str, str]]:
    """The target's declared entrypoints that its ``entrypoints`` grant covers (all of the
    consumer's own, without an alias), in the package's order."""
    access = access_project_data(
        user=user, consumer_id=project_id, alias=alias, op=Op.ENTRYPOINTS, key=None
    )
    target = Project.objects.get(pk=access.target_id)
    return [
        entrypoint.as_dict()
        for entrypoint in declared_entrypoints(target)
        if access.entrypoints.allows(entrypoint.id)
    ]


def project_entrypoint_run(
    *, user: Any, project_id: UUID, entrypoint_id: object, args: object, alias: str | None = None
) -> NoReturn:
    """Always refused: ``not_supported`` once the call is one the grant would allow, so the
    refusal says what to do instead (run it locally); ``forbidden`` before that."""
    checked = check_entrypoint_id(entrypoint_id)
    if args is not None and (
        not isinstance(args, list)
        or len(args) > MAX_ARGS
        or not all(isinstance(arg, str) and len(arg) <= MAX_ARG_CHARS for arg in args)
    ):
        raise invalid_argument(f"args must be a list of at most {MAX_ARGS} strings", field="args")
    access_project_data(
        user=user, consumer_id=project_id, alias=alias, op=Op.ENTRYPOINTS, key=checked
    )
    raise KanbanError(
        ErrorCode.NOT_SUPPORTED,
        f"entrypoint {checked!r} runs locally, from the target project's own directory "
        "(the steamHarness runtime); this server serves data and never starts a project",
    )
