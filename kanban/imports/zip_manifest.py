"""The ``manifest.json`` that opens each zip archive this server reads (a board archive, a
deployment's backup): which format it is and which version, checked before any part is."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Collection
from typing import Any, Final

from storage.errors import invalid_argument

MANIFEST: Final = "manifest.json"


def versioned_manifest(
    zf: zipfile.ZipFile,
    *,
    format_name: str,
    noun: str,
    versions: Collection[int],
    verb: str,
) -> dict[str, Any]:
    """The archive's manifest, refused unless it is a JSON object naming ``format_name``
    and one of ``versions``; ``noun`` (board archive, ...) and ``verb`` (imports, ...)
    word the refusals."""
    try:
        manifest = json.loads(zf.read(MANIFEST))
    except (KeyError, ValueError, zipfile.BadZipFile):
        raise invalid_argument(f"the archive has no readable {MANIFEST}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != format_name:
        raise invalid_argument(f"{MANIFEST} is not a {noun}'s")
    version = manifest.get("version")
    if type(version) is not int or version not in versions:
        raise invalid_argument(
            f"{noun} version {version!r}; this server {verb} versions "
            f"{', '.join(map(str, versions))}",
            field="version",
        )
    return manifest
