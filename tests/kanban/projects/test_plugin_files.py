"""Stored plugin files: which paths a file may have and how each is typed for serving.
Reading, replacing and versioning them through an import is in test_packages and
test_plugin_workflow."""

from __future__ import annotations

import pytest

from kanban.projects.plugin_files import check_plugin_path, content_type_for
from storage.errors import KanbanError


def test_web_types_do_not_depend_on_the_hosts_mime_types() -> None:
    assert [content_type_for(p) for p in ("a/index.HTML", "app.mjs", "x.wasm", "blob")] == [
        "text/html",
        "text/javascript",
        "application/wasm",
        "application/octet-stream",
    ]


@pytest.mark.parametrize("path", ["", "/abs", "a//b", "a/../b", ".env", "a\\b", "a\x00b"])
def test_a_path_no_plugin_file_could_have_is_refused_naming_the_field(path: str) -> None:
    with pytest.raises(KanbanError) as caught:
        check_plugin_path(path, field="files")
    assert caught.value.code == "invalid_argument" and "files" in caught.value.message


def test_a_plugin_path_is_returned_as_it_is() -> None:
    assert check_plugin_path("dist/assets/logo.svg") == "dist/assets/logo.svg"
