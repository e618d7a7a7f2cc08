"""Dependencies point down. Every module of ``storage`` and ``kanban`` belongs to one part of
one layer, and imports only from its own part and from the layers below; the parts of one
layer know nothing of each other. Read from the bottom up:"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Layer:
    parts: tuple[str, ...]
    what_it_does: str


def layer(parts: str, what_it_does: str) -> Layer:
    return Layer(tuple(parts.split()), what_it_does)


BOTTOM_UP: Final = (
    layer("storage", "stores values and announces their changes, and knows nothing of users"),
    layer("kanban.environment", "reads settings from the process environment, refusing typos"),
    layer("kanban.observability", "counts and logs what the parts above do, for operators"),
    layer("kanban.models kanban.migrations", "hold projects, memberships, grants and tokens"),
    layer("kanban.access", "decides who may touch which project's data"),
    layer("kanban.quotas", "bounds what one person may take: rates, caps and sign-in attempts"),
    layer(
        "kanban.accounts kanban.projects",
        "create people and their tokens, and projects with their plugins",
    ),
    layer("kanban.data", "serves what people keep in projects, behind the access decision"),
    layer("kanban.imports", "brings boards in from other tools (Trello)"),
    layer("kanban.webhooks", "tells other tools what changed on a board (outgoing webhooks)"),
    layer("kanban.jobs", "runs in the background what must not hold a request (imports)"),
    layer("kanban.backup", "writes everything a deployment holds to one archive, and back"),
    layer(
        "kanban.api kanban.bridge kanban.mcp kanban.web kanban.admin kanban.management",
        "are the ways in: REST, the websocket bridge, MCP, pages, admin and the command line",
    ),
    layer("kanban.templatetags", "draws what the pages share: dates, faces"),
    layer("kanban", "is the project shell that wires the ways in together"),
)

#: All that the shell keeps at the top of ``kanban``; anything else belongs in a part.
SHELL: Final = frozenset(
    f"kanban{name}" for name in ("", ".settings", ".apps", ".urls", ".routing", ".asgi", ".daphne")
)


def all_modules() -> dict[str, Path]:
    modules = {}
    for package in ("storage", "kanban"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


MODULES: Final = all_modules()


def is_ours(name: str) -> bool:
    return any(name == root or name.startswith(root + ".") for root in ("storage", "kanban"))


def part_of(module: str) -> str:
    """The longest part name that is the module or a package holding it."""
    owners = [
        p for each in BOTTOM_UP for p in each.parts if module == p or module.startswith(p + ".")
    ]
    assert owners, f"{module} belongs to no part of any layer"
    return max(owners, key=len)


def height_of(part: str) -> int:
    return next(i for i, each in enumerate(BOTTOM_UP) if part in each.parts)


def imports_of(module: str, source: str) -> Iterator[tuple[int, str]]:
    """(line, module imported) for every import of storage or kanban, at any depth of the
    file (functions, ``TYPE_CHECKING`` blocks): ``from a import b`` imports ``a.b`` when
    that is a module, else ``a``."""
    is_package = MODULES[module].name == "__init__.py"
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")
                package = package[: len(package) - node.level + (1 if is_package else 0)]
                base = ".".join([*package, base] if base else package)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                yield node.lineno, submodule if submodule in MODULES else base


@dataclass(frozen=True)
class Import:
    module: str
    line: int
    imported: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.imported}"


def our_imports() -> Iterator[Import]:
    for module, path in MODULES.items():
        for line, imported in imports_of(module, path.read_text(encoding="utf-8")):
            if is_ours(imported):
                yield Import(module, line, imported)


def test_every_module_belongs_to_a_part_and_the_shell_alone_sits_at_the_top() -> None:
    for module in MODULES:
        part_of(module)
    top_level = {m for m in MODULES if part_of(m) == "kanban"}
    assert top_level <= SHELL, f"move these into a part: {sorted(top_level - SHELL)}"


def test_a_module_imports_only_from_its_own_part_and_from_lower_layers() -> None:
    upward = []
    for found in our_imports():
        own, other = part_of(found.module), part_of(found.imported)
        if own == other:
            continue
        if height_of(other) >= height_of(own):
            beside = "beside" if height_of(other) == height_of(own) else "above"
            upward.append(f"{found}, and {other} sits {beside} {own}")
    assert not upward, "imports that do not point down:\n" + "\n".join(upward)


def test_storage_never_imports_kanban() -> None:
    from_storage = [
        str(found)
        for found in our_imports()
        if part_of(found.module) == "storage" and found.imported.split(".")[0] == "kanban"
    ]
    assert not from_storage, "storage imports kanban:\n" + "\n".join(from_storage)


def test_the_check_sees_the_imports_it_judges() -> None:
    """Not vacuous: the board page's own imports are seen, resolved to modules."""
    seen = {found.imported for found in our_imports() if found.module == "kanban.web.views"}
    assert {"kanban.projects.boards", "kanban.data.configurations", "storage.errors"} <= seen
    assert "kanban.bridge.service" not in seen
    assert part_of("kanban.web.views") == "kanban.web"
    assert height_of("kanban.web") > height_of("kanban.projects") > height_of("kanban.access")
