"""The process environment read into settings: each reader refuses a value it cannot take
(a typo, a number below its floor, an unknown URL option) by stopping the process with
its name, rather than quietly meaning a default. Only ``kanban.settings`` calls these."""

from __future__ import annotations

import ipaddress
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar
from urllib.parse import parse_qs, urlsplit

import dj_database_url
import dj_email_url
from django.core.exceptions import ImproperlyConfigured

_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})


def env_bool(name: str, default: bool) -> bool:
    """A yes/no setting; a value that is neither (a typo like "ture") refuses to start
    rather than quietly meaning no."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw not in _TRUE | _FALSE:
        raise ImproperlyConfigured(f"{name}={raw!r} is neither of {sorted(_TRUE | _FALSE)}")
    return raw in _TRUE


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    return _env_number(name, default, minimum, int, "a whole number")


def env_float(name: str, default: float, *, minimum: float = 0.0) -> float:
    return _env_number(name, default, minimum, float, "a number")


_Number = TypeVar("_Number", int, float)


def _env_number(
    name: str, default: _Number, minimum: _Number, parse: Callable[[str], _Number], kind: str
) -> _Number:
    """A number setting: unset is ``default``; a value that does not parse, or lies below
    ``minimum``, refuses to start."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = parse(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not {kind}") from None
    if not value >= minimum:  # also refuses nan
        raise ImproperlyConfigured(f"{name}={value} is below {minimum}")
    return value


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = os.environ.get(name, "").strip().lower() or default
    if raw not in choices:
        raise ImproperlyConfigured(f"{name}={raw!r} is none of {', '.join(choices)}")
    return raw


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if not raw:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_networks(name: str, default: list[str]) -> list[str]:
    """Addresses or networks ("10.0.0.0/8, ::1"); an entry that is neither stops the
    process naming it."""
    networks = []
    for entry in env_list(name, default):
        try:
            networks.append(str(ipaddress.ip_network(entry, strict=False)))
        except ValueError:
            raise ImproperlyConfigured(f"{name}: {entry!r} is no address or network") from None
    return networks


def env_executable(name: str, default: Path) -> Path:
    """A program run by this process: unset is ``default``; otherwise an absolute path to
    an executable file, resolved now (a link swapped later changes nothing), or the process
    refuses to start."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not Path(raw).is_absolute():
        raise ImproperlyConfigured(f"{name} must be an absolute path, got {raw!r}")
    program = Path(raw).resolve()
    if not program.is_file() or not os.access(program, os.X_OK):
        raise ImproperlyConfigured(f"{name}={raw!r} is not an executable file")
    return program


def database_from_url(url: str) -> dict[str, Any]:
    """``postgres://user:password@host:port/name?option=value`` or ``sqlite:///path``,
    parsed by dj-database-url, with this project's options for each engine."""
    try:
        database: dict[str, Any] = dict(dj_database_url.parse(url))
    except (ValueError, dj_database_url.UnknownSchemeError) as error:
        raise ImproperlyConfigured(f"DATABASE_URL: {error}") from None
    engine = database["ENGINE"]
    if engine == "django.db.backends.sqlite3":
        path = Path(database["NAME"])
        return {
            "ENGINE": "storage.sqlite_backend",  # Django's, creating the file owner-only
            "NAME": path,
            "OPTIONS": {
                # IMMEDIATE takes the write lock at BEGIN, so two writers queue on
                # busy_timeout instead of one failing with "database is locked".
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
            "TEST": {"NAME": os.environ.get("KANBAN_SQLITE_TEST_PATH") or None},
        }
    if engine != "django.db.backends.postgresql":
        raise ImproperlyConfigured(f"DATABASE_URL engine {engine!r} is not supported")
    return {
        **database,
        "PORT": str(database.get("PORT") or ""),
        # Under ASGI every worker thread would keep its own persistent connection; a pool
        # bounds connections per process instead (Django requires CONN_MAX_AGE 0 with it).
        "CONN_MAX_AGE": 0,
        "OPTIONS": {
            "pool": {
                "min_size": env_int("DATABASE_POOL_MIN", 2),
                "max_size": env_int("DATABASE_POOL_MAX", 12, minimum=1),
                "timeout": env_float("DATABASE_POOL_TIMEOUT", 10.0, minimum=0.1),
            },
            # Django turns psycopg's prepared statements off, for transaction-mode poolers;
            # the storage engine's and the access decision's few statements run on every
            # bridge call and their planning was most of PostgreSQL's work (bench B3). Only
            # server-side binding cursors (those) prepare; Django's own cursors never do.
            # 0 turns it off again, behind a PgBouncer older than 1.21.
            "prepare_threshold": env_int("DATABASE_PREPARE_THRESHOLD", 2) or None,
            **database.get("OPTIONS", {}),
        },
        "TEST": {"NAME": os.environ.get("DATABASE_TEST_NAME") or None},
    }


CONSOLE_EMAIL_BACKEND: Final = "django.core.mail.backends.console.EmailBackend"
#: What an EMAIL_URL may say after ``?``; anything else is a typo that would send nothing.
EMAIL_URL_OPTIONS: Final = frozenset(
    {"ssl", "tls", "timeout", "_server_email", "_default_from_email"}
)


def email_from_url(url: str) -> dict[str, Any]:
    """``submission://user:password@host:587``, ``smtp://host:25``, ``smtp://host?ssl=true``,
    ``console:``, ``file:///path``, parsed by dj-email-url, which guesses where it does not
    know (an unknown scheme, option or yes-word is dropped in silence): here each is an
    error that stops the process, naming what was wrong."""
    parts = urlsplit(url)
    if parts.scheme not in dj_email_url.SCHEMES:
        known = ", ".join(sorted(dj_email_url.SCHEMES))
        raise ImproperlyConfigured(f"EMAIL_URL: scheme {parts.scheme!r} is not one of {known}")
    try:
        parts.port  # noqa: B018 (reading it checks it)
    except ValueError as error:
        raise ImproperlyConfigured(f"EMAIL_URL: {error}") from None
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - EMAIL_URL_OPTIONS)
    if unknown:
        known = ", ".join(sorted(EMAIL_URL_OPTIONS))
        raise ImproperlyConfigured(f"EMAIL_URL: unknown option {unknown[0]!r} (known: {known})")
    for flag in ("ssl", "tls"):
        for value in query.get(flag, []):
            if value.lower() not in _TRUE | _FALSE:
                raise ImproperlyConfigured(f"EMAIL_URL: {flag}={value!r} is neither on nor off")
    if any(value.lower() in _TRUE for value in query.get("ssl", [])) and any(
        value.lower() in _TRUE for value in query.get("tls", [])
    ):
        raise ImproperlyConfigured("EMAIL_URL: ssl and tls are two ways to encrypt; pick one")
    for value in query.get("timeout", []):
        if not value.isdigit() or int(value) < 1:
            raise ImproperlyConfigured(f"EMAIL_URL: timeout={value!r} is not whole seconds")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # smtps is on its way out there; still TLS here
        parsed: dict[str, Any] = dj_email_url.parse(url)
    if parts.scheme in {"smtp", "submission", "submit", "smtps"} and not parts.hostname:
        raise ImproperlyConfigured("EMAIL_URL: an SMTP URL names its host")
    return parsed
