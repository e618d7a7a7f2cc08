"""One zip archive of a deployment: ``manifest.json`` and one JSONL part per model and for
the storage engine.

The manifest says the format and its version, when and from which vendor the archive was
made, the migrations its rows belong to, and each part's rows and sha256. Version 1 has the
parts ``models/<app>.<model>.jsonl`` and ``storage.jsonl``; version 2 adds the attachments'
files (``kanban.backup.files``: kind ``file``, with their size). Both restore; a part of a
kind this server does not know is refused rather than dropped.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from django.core.management.color import no_style
from django.db import connections, transaction
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

from kanban.backup import files as file_parts
from kanban.backup import models as model_parts
from kanban.data.attachments import attachment_bytes_restore
from kanban.imports.zip_manifest import MANIFEST, versioned_manifest
from kanban.projects.attachment_files import attachment_files_delete
from storage import dump
from storage.errors import ErrorCode, KanbanError, invalid_argument

FORMAT = "kanban-backup"
VERSION = 2
#: The kinds of parts each version restored may hold.
KINDS = {1: ("model", "storage"), 2: ("model", "storage", file_parts.KIND)}
STORAGE_PART = "storage.jsonl"
_READ = 1 << 20


class _PartSink:
    """Counts and hashes the lines written through it, passing them on (or not)."""

    def __init__(self, out: IO[bytes] | None = None) -> None:
        self.out = out
        self.digest = hashlib.sha256()
        #: The lines after a header (``skip_header``): what verify compares, since a header
        #: may say what differs between two databases holding the same records.
        self.records = hashlib.sha256()
        self.in_header = False
        self.rows = 0

    def skip_header(self) -> None:
        self.in_header = True

    def write(self, text: str) -> int:
        data = text.encode("utf-8")
        self.digest.update(data)
        if self.in_header and b"\n" in data:
            self.in_header = False
            self.records.update(data[data.index(b"\n") + 1 :])
        elif not self.in_header:
            self.records.update(data)
        self.rows += text.count("\n")
        if self.out is not None:
            self.out.write(data)
        return len(text)

    def entry(self, name: str, kind: str, **extra: Any) -> dict[str, Any]:
        return {"name": name, "kind": kind, **extra, "rows": self.rows, "sha256": self.hexdigest}

    @property
    def hexdigest(self) -> str:
        return self.digest.hexdigest()


def _model_part(label: str) -> str:
    return f"models/{label}.jsonl"


def _migrations(using: str) -> list[str]:
    applied = MigrationRecorder(connections[using]).applied_migrations()
    return sorted(f"{app}.{name}" for app, name in applied)


def _write_parts(sink_for: Any, *, using: str) -> list[dict[str, Any]]:
    """Every part, each through ``sink_for(name)`` (a context manager giving a _PartSink)."""
    parts = []
    for model in model_parts.backed_up_models():
        label = model_parts.model_label(model)
        with sink_for(_model_part(label)) as sink:
            for line in model_parts.row_lines(model, using=using):
                sink.write(line)
        parts.append(sink.entry(_model_part(label), "model", model=label))
    with sink_for(STORAGE_PART) as sink:
        sink.skip_header()
        dump.dump(cast(IO[str], sink), using=using)
    # The dump's first line is its header, not a record. It names the highest seq ever
    # allocated, which a restore moves the target's sequence to but never back: a target
    # whose sequence had run further holds the same records under another header.
    sink.rows -= 1
    parts.append(sink.entry(STORAGE_PART, "storage", recordsSha256=sink.records.hexdigest()))
    return parts


def _snapshot(using: str, *, outermost: bool) -> None:
    """Read every part from one snapshot: rows committed meanwhile are in none of them."""
    # Inside a caller's transaction the isolation is the caller's (and can no longer be set).
    if outermost and connections[using].vendor == "postgresql":
        with connections[using].cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    # SQLite: the transaction is one snapshot already.


def backup_write(*, path: Path, using: str = "default") -> dict[str, Any]:
    """Write the archive of everything ``using`` holds to ``path``; returns its manifest."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    outermost = not connections[using].in_atomic_block
    with (
        zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf,
        transaction.atomic(using=using),
    ):
        _snapshot(using, outermost=outermost)

        class _ZipSink:
            def __init__(self, name: str) -> None:
                self.name = name

            def __enter__(self) -> _PartSink:
                self.stream = zf.open(self.name, "w", force_zip64=True)
                return _PartSink(self.stream)

            def __exit__(self, *exc: object) -> None:
                self.stream.close()

        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "created_at": timezone.now().isoformat(),
            "source": {"vendor": connections[using].vendor},
            "migrations": _migrations(using),
            "excluded": model_parts.EXCLUDED,
            "parts": _write_parts(_ZipSink, using=using) + file_parts.files_write(zf, using=using),
        }
        zf.writestr(MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    partial.replace(path)  # a backup cut short never passes for a whole one
    return manifest


def _open(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as error:
        raise invalid_argument(f"{path}: not a backup archive ({error})") from None


def manifest_read(zf: zipfile.ZipFile) -> dict[str, Any]:
    manifest = versioned_manifest(
        zf, format_name=FORMAT, noun="kanban backup", versions=KINDS, verb="restores"
    )
    version = manifest["version"]
    known = {_model_part(model_parts.model_label(m)) for m in model_parts.backed_up_models()}
    for part in manifest.get("parts", []):
        if part.get("kind") == "model" and part.get("name") not in known:
            raise invalid_argument(
                f"the archive holds {part.get('name')}, a model this server does not have"
            )
        if part.get("kind") not in KINDS[version]:
            raise invalid_argument(f"the archive holds a part of unknown kind {part.get('kind')!r}")
        if part["kind"] == file_parts.KIND:
            file_parts.check_file_part(part)
    return manifest


def _lines(zf: zipfile.ZipFile, name: str) -> Iterator[str]:
    with zf.open(name) as raw:
        yield from io.TextIOWrapper(raw, encoding="utf-8", newline="\n")


def _check_parts(zf: zipfile.ZipFile, manifest: dict[str, Any]) -> None:
    """Every part whole, as the manifest says: before anything is written."""
    for part in manifest["parts"]:
        digest = hashlib.sha256()
        size = 0
        try:
            with zf.open(part["name"]) as raw:
                while block := raw.read(_READ):
                    digest.update(block)
                    size += len(block)
        except KeyError:
            raise invalid_argument(f"the archive lacks {part['name']}") from None
        except zipfile.BadZipFile as error:
            raise invalid_argument(f"{part['name']} is damaged: {error}") from None
        if digest.hexdigest() != part["sha256"] or size != part.get("size", size):
            raise invalid_argument(
                f"{part['name']} does not match its checksum in the manifest: the archive "
                "was changed or damaged"
            )


def _check_empty(using: str) -> None:
    filled = model_parts.has_rows(using=using)
    if not dump.is_empty(using=using):
        filled.append("storage")
    if filled:
        raise KanbanError(
            ErrorCode.CONFLICT,
            "a restore needs an empty, migrated database; this one holds " + ", ".join(filled),
            holding=filled,
        )


def _check_migrations(manifest: dict[str, Any], using: str) -> None:
    here = set(_migrations(using))
    archived = set(manifest.get("migrations", []))
    if here != archived:
        missing, extra = sorted(archived - here), sorted(here - archived)
        raise invalid_argument(
            "the archive's rows belong to other migrations than this database's: "
            f"not applied here {missing}, applied here only {extra}. Restore with the "
            "server version that made the archive (migrated the same)",
            missing=missing,
            extra=extra,
        )


def backup_restore(*, path: Path, using: str = "default") -> dict[str, Any]:
    """Load the archive at ``path`` into the empty database ``using``, all or nothing;
    returns its manifest."""
    with _open(path) as zf:
        manifest = manifest_read(zf)
        _check_parts(zf, manifest)
        written: list[str] = []
        try:
            _restore(zf, manifest, written, using=using)
        except BaseException:
            # The database rolled back: files it no longer names are not left behind.
            attachment_files_delete(paths=written)
            raise
    return manifest


def _restore(
    zf: zipfile.ZipFile, manifest: dict[str, Any], written: list[str], *, using: str
) -> None:
    files = [part for part in manifest["parts"] if part["kind"] == file_parts.KIND]
    with transaction.atomic(using=using):
        _check_migrations(manifest, using)
        _check_empty(using)
        file_parts.check_files_absent(files)
        # Before the rows: a load that fails then (rows the manifest did not promise, a
        # constraint) also tests the removal of the files written.
        file_parts.files_restore(zf, files, written)
        loaded = []
        for part in manifest["parts"]:
            if part["kind"] == "model":
                rows = model_parts.rows_load(_lines(zf, part["name"]), using=using)
                loaded.append(part["model"])
            elif part["kind"] == "storage":
                with zf.open(part["name"]) as raw:
                    text = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
                    rows = dump.load(text, using=using)
            else:
                continue  # a file, written already
            if rows != part["rows"]:
                raise invalid_argument(
                    f"{part['name']}: {rows} rows, the manifest says {part['rows']}"
                )
        _reset_sequences(using, loaded)
        attachment_bytes_restore(using=using)


def _reset_sequences(using: str, labels: list[str]) -> None:
    """New rows continue past the restored ids (PostgreSQL's sequences do not follow rows
    inserted with their ids; SQLite's AUTOINCREMENT does)."""
    connection = connections[using]
    by_label = {model_parts.model_label(m): m for m in model_parts.backed_up_models()}
    statements = connection.ops.sequence_reset_sql(no_style(), [by_label[x] for x in labels])
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


@dataclass(frozen=True)
class PartCheck:
    name: str
    rows: int
    expected_rows: int
    sha256: str
    expected_sha256: str
    #: What ``rows`` counts: a file part's are its bytes.
    unit: str = "rows"

    @property
    def agrees(self) -> bool:
        return self.rows == self.expected_rows and self.sha256 == self.expected_sha256


def backup_verify(*, path: Path, using: str = "default") -> list[PartCheck]:
    """Each part of the archive against what ``using`` holds now: rows and sha256 of the
    same lines written from this database; each attachment file's size and sha256 as the
    attachments storage holds it (and a file the database names that the archive lacks)."""
    with _open(path) as zf:
        manifest = manifest_read(zf)
    sinks: dict[str, _PartSink] = {}

    class _HashSink:
        def __init__(self, name: str) -> None:
            self.name = name

        def __enter__(self) -> _PartSink:
            sinks[self.name] = _PartSink()
            return sinks[self.name]

        def __exit__(self, *exc: object) -> None:
            pass

    outermost = not connections[using].in_atomic_block
    with transaction.atomic(using=using):
        _snapshot(using, outermost=outermost)
        found = {part["name"]: part for part in _write_parts(_HashSink, using=using)}
        files = file_parts.files_found(using=using)
    checks = []
    for part in manifest["parts"]:
        if part["kind"] == file_parts.KIND:
            file = files.pop(part["name"], file_parts.FileCheck(part["name"], 0, ""))
            checks.append(
                PartCheck(file.name, file.size, part["size"], file.sha256, part["sha256"], "bytes")
            )
            continue
        here = found.pop(part["name"], {"rows": 0, "sha256": ""})
        digest = "recordsSha256" if "recordsSha256" in part else "sha256"
        checks.append(
            PartCheck(part["name"], here["rows"], part["rows"], here.get(digest, ""), part[digest])
        )
    # A model this database has and the archive does not (a newer server's) with rows.
    checks.extend(
        PartCheck(name, here["rows"], 0, here["sha256"], "")
        for name, here in found.items()
        if here["rows"]
    )
    checks.extend(PartCheck(f.name, f.size, 0, f.sha256, "", "bytes") for f in files.values())
    return checks
