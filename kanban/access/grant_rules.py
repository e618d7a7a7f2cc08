"""Grant rules: what one project allows a related project to do with its keys, Knowledge
documents and entrypoints. A ``Rule`` says which keys it opens (none, all, or those
starting with a prefix); a ``Grant`` holds one rule per kind of access.

This is where a reader hunting "who may do what" starts: the rule grammar (``check_rule``),
the defaults of a new relationship (``Grant()``), and how a grant is kept in a
relationship's columns. The access decision (``kanban.access.decision``) evaluates these
rules; ``kanban.access.relationships`` declares them between projects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from storage.limits import MAX_KEY_CHARS

MAX_PREFIXES: Final = 32
#: A prefix longer than the longest key could never match.
MAX_PREFIX_LENGTH: Final = MAX_KEY_CHARS

RuleModeName = Literal["none", "all", "prefixes"]
RULE_MODES: Final[tuple[str, ...]] = ("none", "all", "prefixes")

#: Grant fields in model order, with their place inside ``grantToRelatedProject``.
GRANT_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "read": ("read",),
    "write": ("write",),
    "knowledge_read": ("knowledge", "read"),
    "knowledge_write": ("knowledge", "write"),
    "entrypoints": ("entrypoints",),
}
#: The model columns holding a grant, ``<field>_mode`` and ``<field>_prefixes``.
GRANT_COLUMNS: Final[tuple[str, ...]] = tuple(
    f"{name}_{part}" for name in GRANT_FIELDS for part in ("mode", "prefixes")
)

#: Where a problem sits in JSON: keys and list positions, outermost first.
Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Rule:
    """``none``, ``all``, or ``prefixes``: a key is allowed when it starts with any one."""

    mode: RuleModeName
    prefixes: tuple[str, ...] = ()

    def allows(self, key: str) -> bool:
        if self.mode == "all":
            return True
        if self.mode == "prefixes":
            return key.startswith(self.prefixes)
        return False

    @property
    def is_none(self) -> bool:
        return self.mode == "none"

    def as_json(self) -> dict[str, Any]:
        if self.mode == "prefixes":
            return {"mode": self.mode, "prefixes": list(self.prefixes)}
        return {"mode": self.mode}


NONE: Final = Rule("none")
ALL: Final = Rule("all")


@dataclass(frozen=True, slots=True)
class Grant:
    """What the declaring project allows the related project to do. The defaults are the
    product's defaults for a new relationship: read all, nothing else."""

    read: Rule = ALL
    write: Rule = NONE
    knowledge_read: Rule = NONE
    knowledge_write: Rule = NONE
    entrypoints: Rule = NONE

    def as_json(self) -> dict[str, Any]:
        """The package shape; ``knowledge`` and ``entrypoints`` only when they grant
        something, since leaving them out grants nothing."""
        data: dict[str, Any] = {"read": self.read.as_json(), "write": self.write.as_json()}
        if not (self.knowledge_read.is_none and self.knowledge_write.is_none):
            data["knowledge"] = {
                "read": self.knowledge_read.as_json(),
                "write": self.knowledge_write.as_json(),
            }
        if not self.entrypoints.is_none:
            data["entrypoints"] = self.entrypoints.as_json()
        return data


def check_rule(rule: Rule, *, label: str) -> list[tuple[Path, str]]:
    """The rule grammar: a known mode; ``prefixes`` needs 1-32 non-empty, unique prefixes
    and the other modes carry none. Returns (path below the rule, message) pairs."""
    if rule.mode not in RULE_MODES:
        return [(("mode",), f"{label}.mode must be one of {', '.join(RULE_MODES)}")]
    prefixes = rule.prefixes
    if rule.mode != "prefixes":
        if prefixes:
            return [(("prefixes",), f"{label}.prefixes is only allowed with mode 'prefixes'")]
        return []
    if not prefixes:
        return [(("prefixes",), f"{label}.prefixes needs at least 1 prefix with mode 'prefixes'")]
    if len(prefixes) > MAX_PREFIXES:
        return [
            (
                ("prefixes",),
                f"{label}.prefixes allows at most {MAX_PREFIXES} prefixes (got {len(prefixes)})",
            )
        ]
    problems: list[tuple[Path, str]] = []
    seen: set[str] = set()
    for position, prefix in enumerate(prefixes):
        where = f"{label}.prefixes[{position}]"
        if not isinstance(prefix, str) or not prefix:
            problems.append((("prefixes", position), f"{where} must be a non-empty string"))
        elif len(prefix) > MAX_PREFIX_LENGTH:
            message = f"{where} is longer than {MAX_PREFIX_LENGTH} characters"
            problems.append((("prefixes", position), message))
        elif prefix in seen:
            problems.append((("prefixes", position), f"{where} repeats {prefix!r}"))
        else:
            seen.add(prefix)
    return problems


#: What knowledge prefixes once had to start with: the storage key of a document.
LEGACY_KNOWLEDGE_PREFIX: Final = "knowledge.document."


def legacy_knowledge_rule(rule: Rule) -> Rule:
    """Knowledge prefixes are document-id prefixes (``kb_`` opens ``kb_1``). Declarations
    written before spelled them as storage keys (``knowledge.document.kb_``); those keep
    meaning what they meant."""
    prefixes = tuple(p.removeprefix(LEGACY_KNOWLEDGE_PREFIX) for p in rule.prefixes)
    if rule.mode == "prefixes" and "" in prefixes:  # every document, then
        return ALL
    return Rule(mode=rule.mode, prefixes=prefixes)


def grant_from_columns(columns: Mapping[str, Any]) -> Grant:
    """A grant from the model columns (``read_mode``, ``read_prefixes``, ...)."""
    return Grant(
        **{
            name: Rule(
                mode=columns[f"{name}_mode"], prefixes=tuple(columns[f"{name}_prefixes"] or ())
            )
            for name in GRANT_FIELDS
        }
    )


def grant_to_columns(grant: Grant) -> dict[str, Any]:
    columns: dict[str, Any] = {}
    for name in GRANT_FIELDS:
        rule: Rule = getattr(grant, name)
        columns[f"{name}_mode"] = rule.mode
        columns[f"{name}_prefixes"] = list(rule.prefixes)
    return columns
