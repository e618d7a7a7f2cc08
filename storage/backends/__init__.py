"""SQL dialects behind one contract; the engine picks one by the connection's vendor."""

from __future__ import annotations

from storage.backends.base import Dialect
from storage.backends.postgresql import PostgresDialect
from storage.backends.sqlite import SqliteDialect

_DIALECTS: dict[str, Dialect] = {"postgresql": PostgresDialect(), "sqlite": SqliteDialect()}


def dialect_for(vendor: str) -> Dialect:
    try:
        return _DIALECTS[vendor]
    except KeyError:
        raise RuntimeError(f"the storage engine has no dialect for {vendor!r}") from None
