"""Relationship declarations: which projects a project relates to and what it grants each,
their one validation, and the services that change a project's declarations. The grant
rules themselves (what a rule allows, the rule grammar) are ``kanban.access.grant_rules``.

The admin, the package importer and every service validate through ``check_declarations``
(JSON input goes through ``declarations_from_json`` first, which only checks shapes and
types). Each problem carries the JSON path of the offending field below
``relatedProjects`` and a message that names that field.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, cast
from uuid import UUID

from django.db import transaction
from django.db.models import Exists, OuterRef

from kanban.access.events import publish_access_changed
from kanban.access.grant_rules import (
    GRANT_COLUMNS,
    GRANT_FIELDS,
    Grant,
    Path,
    Rule,
    RuleModeName,
    check_rule,
    grant_from_columns,
    grant_to_columns,
    legacy_knowledge_rule,
)
from kanban.models import Membership, Project, Relationship, Role
from storage.errors import KanbanError, invalid_argument
from storage.limits import SPEC

#: The alias grammar, from the protocol spec (bridge_js/protocol.json), without its anchors.
ALIAS_PATTERN: Final[str] = SPEC["alias"].removeprefix("^").removesuffix("$")
ALIAS_RE: Final = re.compile(ALIAS_PATTERN)
MAX_RELATIONSHIPS: Final = 32


@dataclass(frozen=True, slots=True)
class Declaration:
    """One entry of ``relatedProjects``."""

    alias: str
    project_id: UUID
    grant: Grant = field(default_factory=Grant)

    def as_json(self) -> dict[str, Any]:
        return {
            "alias": self.alias,
            "projectId": str(self.project_id),
            "grantToRelatedProject": self.grant.as_json(),
        }


@dataclass(frozen=True, slots=True)
class Problem:
    """One validation failure: where (a JSON path below ``relatedProjects``) and what."""

    path: Path
    message: str

    def located(self, base: str) -> str:
        return f"{format_path(base, self.path)}: {self.message}"


def format_path(base: str, path: Path) -> str:
    text = base
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def problems_error(problems: Sequence[Problem], *, base: str = "relatedProjects") -> KanbanError:
    """The ``invalid_argument`` error for a list of problems, each with its full path."""
    located = [
        {"path": format_path(base, problem.path), "message": problem.message}
        for problem in problems
    ]
    summary = problems[0].message
    if len(problems) > 1:
        summary += f" (and {len(problems) - 1} more)"
    return invalid_argument(summary, problems=located)


# --- validation ----------------------------------------------------------------------------


def check_declarations(*, project_id: UUID, declarations: Sequence[Declaration]) -> list[Problem]:
    """Every rule a project's declaration list must follow; an empty list means valid."""
    entries = [
        _Entry(
            alias=declaration.alias,
            project_id=declaration.project_id,
            rules={name: getattr(declaration.grant, name) for name in GRANT_FIELDS},
        )
        for declaration in declarations
    ]
    return _check(project_id, list(enumerate(entries)), total=len(entries))


@dataclass(slots=True)
class _Entry:
    """What could be read of one declaration; a part that could not (wrong JSON shape,
    already reported) is None or missing, and its rules are not checked."""

    alias: str | None
    project_id: UUID | None
    rules: dict[str, Rule]

    def declaration(self) -> Declaration | None:
        if self.alias is None or self.project_id is None or len(self.rules) < len(GRANT_FIELDS):
            return None
        return Declaration(alias=self.alias, project_id=self.project_id, grant=Grant(**self.rules))


def _check(project_id: UUID, indexed: list[tuple[int, _Entry]], *, total: int) -> list[Problem]:
    problems: list[Problem] = []
    if total > MAX_RELATIONSHIPS:
        problems.append(
            Problem(
                (),
                f"relatedProjects allows at most {MAX_RELATIONSHIPS} relationships (got {total})",
            )
        )
    first_alias: dict[str, int] = {}
    first_target: dict[UUID, int] = {}
    for index, entry in indexed:
        alias = entry.alias
        if alias is None:
            pass
        elif not isinstance(alias, str) or not ALIAS_RE.fullmatch(alias):
            problems.append(
                Problem((index, "alias"), f"alias {alias!r} must match {ALIAS_PATTERN}")
            )
        elif alias in first_alias:
            problems.append(
                Problem(
                    (index, "alias"),
                    f"alias {alias!r} is already used by relationship {first_alias[alias] + 1}",
                )
            )
        else:
            first_alias[alias] = index
        target = entry.project_id
        if target is None:
            pass
        elif target == project_id:
            problems.append(
                Problem((index, "projectId"), "projectId must name another project, not this one")
            )
        elif target in first_target:
            problems.append(
                Problem(
                    (index, "projectId"),
                    f"projectId {target} is already declared by relationship "
                    f"{first_target[target] + 1}",
                )
            )
        else:
            first_target[target] = index
        for name, rule in entry.rules.items():
            json_path = GRANT_FIELDS[name]
            for suffix, message in check_rule(rule, label=".".join(json_path)):
                path = (index, "grantToRelatedProject", *json_path, *suffix)
                problems.append(Problem(path, message))
    return problems


# --- JSON (package.json) shape ---------------------------------------------------------------


def declarations_from_json(
    raw: object, *, project_id: UUID
) -> tuple[list[Declaration], list[Problem]]:
    """Read ``relatedProjects`` from JSON and validate it: the declarations that could be
    read and every problem found, entry by entry (shape problems first, then the rules of
    ``check_declarations`` for whatever parts could be read)."""
    if not isinstance(raw, list):
        return [], [Problem((), "relatedProjects must be a list")]
    problems: list[Problem] = []
    indexed: list[tuple[int, _Entry]] = []
    for index, item in enumerate(raw):
        entry = _entry_from_json(item, (index,), problems)
        if entry is not None:
            indexed.append((index, entry))
    problems.extend(_check(project_id, indexed, total=len(raw)))
    declarations = [
        declaration for _, entry in indexed if (declaration := entry.declaration()) is not None
    ]
    return declarations, sorted(problems, key=lambda problem: problem.path[:1])


def declaration_from_json(item: object) -> Declaration | None:
    """One well-shaped ``relatedProjects`` entry, or None (no rule checks)."""
    problems: list[Problem] = []
    entry = _entry_from_json(item, (), problems)
    return None if entry is None or problems else entry.declaration()


def _entry_from_json(item: object, path: Path, problems: list[Problem]) -> _Entry | None:
    if not isinstance(item, dict):
        problems.append(Problem(path, "a relationship must be an object"))
        return None
    _refuse_unknown(item, {"alias", "projectId", "grantToRelatedProject"}, path, problems)
    alias = item.get("alias")
    if not isinstance(alias, str):
        problems.append(Problem((*path, "alias"), "alias is required and must be a string"))
        alias = None
    project_id: UUID | None = None
    raw_id = item.get("projectId")
    if not isinstance(raw_id, str):
        problems.append(Problem((*path, "projectId"), "projectId is required and must be a string"))
    else:
        try:
            project_id = UUID(raw_id)
        except ValueError:
            problems.append(Problem((*path, "projectId"), f"projectId {raw_id!r} is not a UUID"))
    rules = _rules_from_json(
        item.get("grantToRelatedProject", {}), (*path, "grantToRelatedProject"), problems
    )
    return _Entry(alias=alias, project_id=project_id, rules=rules)


def _rules_from_json(raw: object, path: Path, problems: list[Problem]) -> dict[str, Rule]:
    """The grant's rules that could be read (defaults where a rule is left out)."""
    if not isinstance(raw, dict):
        problems.append(Problem(path, "grantToRelatedProject must be an object"))
        return {}
    _refuse_unknown(raw, {"read", "write", "knowledge", "entrypoints"}, path, problems)
    knowledge = raw.get("knowledge", {})
    if not isinstance(knowledge, dict):
        problems.append(Problem((*path, "knowledge"), "knowledge must be an object"))
        knowledge = {}
    _refuse_unknown(knowledge, {"read", "write"}, (*path, "knowledge"), problems)
    defaults = Grant()
    rules: dict[str, Rule] = {}
    for name, json_path in GRANT_FIELDS.items():
        container = knowledge if json_path[0] == "knowledge" else raw
        if json_path[-1] not in container:
            rules[name] = getattr(defaults, name)
            continue
        rule = _rule_from_json(container[json_path[-1]], (*path, *json_path), problems)
        if rule is not None:
            rules[name] = legacy_knowledge_rule(rule) if json_path[0] == "knowledge" else rule
    return rules


def _rule_from_json(raw: object, path: Path, problems: list[Problem]) -> Rule | None:
    label = ".".join(str(part) for part in path[path.index("grantToRelatedProject") + 1 :])
    if not isinstance(raw, dict):
        problems.append(Problem(path, f"{label} must be an object with a mode"))
        return None
    _refuse_unknown(raw, {"mode", "prefixes"}, path, problems)
    mode = raw.get("mode")
    if not isinstance(mode, str):
        problems.append(Problem((*path, "mode"), f"{label}.mode is required and must be a string"))
        return None
    prefixes = raw.get("prefixes", [])
    if not isinstance(prefixes, list):
        problems.append(Problem((*path, "prefixes"), f"{label}.prefixes must be a list"))
        return None
    return Rule(mode=cast(RuleModeName, mode), prefixes=tuple(prefixes))


def _refuse_unknown(
    raw: Mapping[str, Any], allowed: set[str], path: Path, problems: list[Problem]
) -> None:
    # An unknown key is most likely a typo of a grant, which would otherwise grant nothing
    # without a word.
    for key in raw:
        if key not in allowed:
            problems.append(Problem((*path, key), f"unknown field {key!r}"))


# --- rows ------------------------------------------------------------------------------------


def declaration_from_row(row: Relationship) -> Declaration:
    columns = {column: getattr(row, column) for column in GRANT_COLUMNS}
    return Declaration(
        alias=row.alias, project_id=row.related_project_id, grant=grant_from_columns(columns)
    )


def declarations_of(project: Project) -> list[Declaration]:
    return [declaration_from_row(row) for row in project.relationships.order_by("position", "id")]


# --- services --------------------------------------------------------------------------------


def relationships_set(
    *, project: Project, declarations: Sequence[Declaration]
) -> list[Relationship]:
    """Replace the project's declarations with these, in this order, after validating them.

    Publishes one access-changed event naming the project and every project it declared
    before or declares now: both directions of each relationship may have changed. An
    unchanged list writes nothing and publishes nothing.
    """
    problems = check_declarations(project_id=project.id, declarations=declarations)
    if problems:
        raise problems_error(problems)
    with transaction.atomic():
        _lock(project)
        existing = Relationship.objects.filter(project=project).order_by("position", "id")
        rows = list(existing)
        if [declaration_from_row(row) for row in rows] == list(declarations):
            return rows  # an unchanged list changes nobody's access
        before = {row.related_project_id for row in rows}
        existing.delete()
        rows = Relationship.objects.bulk_create(
            Relationship(
                project=project,
                alias=declaration.alias,
                related_project_id=declaration.project_id,
                position=position,
                **grant_to_columns(declaration.grant),
            )
            for position, declaration in enumerate(declarations)
        )
        after = {declaration.project_id for declaration in declarations}
        publish_access_changed(project_ids={project.id, *before, *after})
    return rows


def relationship_declare(
    *, project: Project, alias: str, project_id: UUID, grant: Grant | None = None
) -> None:
    """Add one relationship, or replace the one with this alias, keeping the others."""
    with transaction.atomic():
        current = _locked_declarations(project)
        declaration = Declaration(alias=alias, project_id=project_id, grant=grant or Grant())
        replaced = [declaration if item.alias == alias else item for item in current]
        if not any(item.alias == alias for item in current):
            replaced.append(declaration)
        relationships_set(project=project, declarations=replaced)


def relationship_remove(*, project: Project, alias: str) -> bool:
    """Remove the relationship with this alias; False when there was none."""
    with transaction.atomic():
        current = _locked_declarations(project)
        kept = [item for item in current if item.alias != alias]
        if len(kept) == len(current):
            return False
        relationships_set(project=project, declarations=kept)
        return True


def _locked_declarations(project: Project) -> list[Declaration]:
    _lock(project)
    return declarations_of(project)


def _lock(project: Project) -> None:
    # Changes of one project's declaration list take the project row's lock first, so two
    # of them serialise instead of one silently undoing (or colliding with) the other.
    # SQLite has no row locks; its IMMEDIATE transactions already serialise writers.
    list(Project.objects.select_for_update().filter(pk=project.pk).values_list("pk"))


# --- status ----------------------------------------------------------------------------------


class RelationshipStatus(StrEnum):
    CONFIRMED = "confirmed"
    PENDING = "pending"
    TARGET_UNKNOWN = "target unknown"


def relationship_statuses(
    *, project_id: UUID, related_project_ids: Iterable[UUID]
) -> dict[UUID, RelationshipStatus]:
    """Each declared relationship's live status: confirmed when the related project exists
    and points back, pending when it exists but does not, else target unknown."""
    wanted = set(related_project_ids)
    points_back = Relationship.objects.filter(project=OuterRef("pk"), related_project_id=project_id)
    found = dict(
        Project.objects.filter(pk__in=wanted)
        .annotate(points_back=Exists(points_back))
        .values_list("pk", "points_back")
    )
    return {
        target: (
            RelationshipStatus.TARGET_UNKNOWN
            if target not in found
            else RelationshipStatus.CONFIRMED
            if found[target]
            else RelationshipStatus.PENDING
        )
        for target in wanted
    }


def alias_for(name: str, taken: set[str]) -> str:
    """An alias for a project named ``name``: its letters and digits, lower case, joined by
    dashes (``Stock room`` is ``stock-room``), made unique among ``taken``."""
    words = re.findall(r"[a-z0-9]+", name.lower())
    base = "-".join(words)[:56].strip("-")
    if not base or not base[0].isalpha():
        base = "project" + (f"-{base}" if base else "")
    alias, n = base, 2
    while alias in taken:
        alias, n = f"{base}-{n}", n + 1
    return alias


def relationships_declare_back(
    *, actor: Any, project: Project, only: Collection[UUID] | None = None
) -> list[tuple[Project, str]]:
    """For each project ``project`` declares (of ``only``, when given) that ``actor`` owns
    too and that does not point back yet, declare ``project`` there, with the new
    relationship's default grant (``read: all``, ``write: none``, seed 000): a relationship
    between two projects of one owner is confirmed at once. A project someone else owns
    stays as it is, its side pending until its own owner declares it. Returns (project,
    alias) of each written."""
    written = []
    for declaration in declarations_of(project):
        if only is not None and declaration.project_id not in only:
            continue
        other = Project.objects.filter(pk=declaration.project_id).first()
        owner = (
            getattr(actor, "is_superuser", False)
            or Membership.objects.filter(user_id=actor.pk, project=other, role=Role.OWNER).exists()
        )
        if other is None or not owner:
            continue
        theirs = declarations_of(other)
        if any(item.project_id == project.id for item in theirs):
            continue
        alias = alias_for(project.name, {item.alias for item in theirs})
        relationship_declare(project=other, alias=alias, project_id=project.id, grant=Grant())
        written.append((other, alias))
    return written
