"""Token usage, as the steamHarness runtime records it (seed 000, "Token usage statistics").

The runtime writes cumulative totals, and only totals, into the project's KV under
``USAGE_KEY`` (and, for a conversation, into that conversation's KV under the same
key): a JSON object of non-negative integers (below 2^53) named by ``FIELDS``. The server keeps no
system-wide record of its own: the system total is the sum of the project totals, computed
when asked. A stored value that is not such an object counts as zero and is reported, so a
runtime's mistake is visible instead of silently lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID

from kanban.data.kv import project_kv_get
from kanban.data.target import Target
from kanban.models import Project
from storage import kv

USAGE_KEY: Final = "steamHarness.tokenUsage"
#: The largest counter believed: past it no sum stays exact in a JSON number (2^53), and a
#: runtime cannot have counted that many tokens; a larger one counts zero and is flagged.
MAX_COUNT: Final = 2**53 - 1
#: The runtime's counters, by their names in the stored object (and the admin's labels).
FIELDS: Final = {
    "inputTokens": "Input",
    "outputTokens": "Output",
    "reasoningTokens": "Reasoning",
    "cachedInputTokens": "Cache read",
    "cacheCreationTokens": "Cache write",
    "calls": "Calls",
}


@dataclass(frozen=True, slots=True)
class Usage:
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIELDS, 0))
    #: The stored value was there but not an object of counters.
    malformed: bool = False

    @property
    def total_tokens(self) -> int:
        return self.totals["inputTokens"] + self.totals["outputTokens"]

    def as_dict(self) -> dict[str, Any]:
        return {**self.totals, "totalTokens": self.total_tokens, "malformed": self.malformed}


def usage_from_value(value: Any) -> Usage:
    if value is None:
        return Usage()
    if not isinstance(value, dict):
        return Usage(malformed=True)
    totals, malformed = {}, False
    for name in FIELDS:
        count = value.get(name, 0)
        if type(count) is not int or not 0 <= count <= MAX_COUNT:
            count, malformed = 0, True
        totals[name] = count
    return Usage(totals=totals, malformed=malformed)


def project_token_usage(
    *, user: Any, project_id: UUID, conversation_id: str | None = None
) -> Usage:
    """The project's (or one conversation's) totals, for anyone who may read its KV."""
    entry = project_kv_get(
        target=Target(user=user, project_id=project_id, conversation_id=conversation_id),
        key=USAGE_KEY,
    )
    return usage_from_value(None if entry is None else entry.value)


@dataclass(frozen=True, slots=True)
class SystemUsage:
    projects: list[tuple[Project, Usage]]
    total: Usage


def system_token_usage() -> SystemUsage:
    """Every project's totals and their sum. For staff: it reads every project's KV."""
    rows = []
    for project in Project.objects.order_by("name", "id"):
        entry = kv.kv_get(dataset=kv.Dataset(project.id, "kv"), key=USAGE_KEY)
        rows.append((project, usage_from_value(None if entry is None else entry.value)))
    sums = dict.fromkeys(FIELDS, 0)
    for _, usage in rows:
        for name in FIELDS:
            sums[name] += usage.totals[name]
    return SystemUsage(
        projects=rows,
        total=Usage(totals=sums, malformed=any(usage.malformed for _, usage in rows)),
    )
