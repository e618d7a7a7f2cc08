"""What importing a package would undo: the changes made in the database (a rename, a
new relationship) since the package was last imported, which an import replaces only when
told to (``project_import(replace_database_changes=True)``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from kanban.access.relationships import declaration_from_json, declarations_of
from kanban.models import Project

if TYPE_CHECKING:
    from kanban.projects.packages import Package

RELATED_BASE: Final = "steamHarness.projectInfo.relatedProjects"


def database_changes_replaced(project: Project, package: Package) -> list[dict[str, str]]:
    """What importing ``package`` would replace that the database holds and the last
    import did not put there (everything, for a project never imported): the name, the
    type, and each relationship declaration dropped or changed."""
    last = _last_import(project)
    problems: list[dict[str, str]] = []
    came_from, coming = package_name(project.package_json), package_name(package.text)
    if came_from is not None and came_from != coming:
        problems.append(
            {
                "path": "name",
                "message": f"this project was imported from package {came_from!r}; this is "
                f"{coming!r}: another package under the same project id would replace it",
            }
        )
    for field in ("name", "type"):
        now, wanted = str(getattr(project, field)), str(getattr(package, field))
        if now != wanted and now != last.get(field):
            problems.append(
                {
                    "path": f"steamHarness.projectInfo.{field}",
                    "message": f"the database has {now!r}, set since the last import; "
                    f"the package would make it {wanted!r}",
                }
            )
    imported = set(last.get("declarations", ()))
    kept = set(package.declarations)
    for declaration in declarations_of(project):
        if declaration in kept or declaration in imported:
            continue
        replaced = any(d.alias == declaration.alias for d in package.declarations)
        problems.append(
            {
                "path": f"{RELATED_BASE}[alias={declaration.alias}]",
                "message": f"relationship {declaration.alias!r} to {declaration.project_id} "
                "was made in the database since the last import; the package would "
                + ("change it" if replaced else "drop it"),
            }
        )
    return problems


def package_name(text: str) -> str | None:
    """The npm ``name`` of a package.json text (None when there is none to compare)."""
    try:
        name = json.loads(text).get("name") if text else None
    except (ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def _last_import(project: Project) -> dict[str, Any]:
    """Name, type and declarations of the package last imported into ``project``."""
    try:
        info = json.loads(project.package_json)["steamHarness"]["projectInfo"]
        related = info.get("relatedProjects") or []
        declarations = [d for d in map(declaration_from_json, related) if d is not None]
        return {"name": info.get("name"), "type": info.get("type"), "declarations": declarations}
    except (ValueError, KeyError, TypeError, AttributeError):
        return {}
