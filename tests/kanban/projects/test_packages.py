"""Project packages: import from a folder, export back, refuse what is invalid whole."""

from __future__ import annotations

import json
import os
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import AbstractUser
from django.test import Client

from kanban.access.grant_rules import Grant, Rule
from kanban.access.memberships import membership_set, role_of
from kanban.access.relationships import (
    Declaration,
    RelationshipStatus,
    declarations_of,
    relationship_statuses,
)
from kanban.models import PluginFile, Project
from kanban.projects import packages
from kanban.projects.exports import project_export
from kanban.projects.packages import declared_entrypoints, project_import, read_package
from kanban.projects.plugin_files import plugin_file_read
from storage import engine
from storage.errors import KanbanError
from storage.namespaces import project_kv
from storage.writes import set_value
from tests.factories import a_declaration
from tests.kanban.conftest import MakeProject

pytestmark = pytest.mark.django_db

SHOP = "5b0e2f4c-6a53-4f7e-9d0b-1c2d3e4f5a6b"
WAREHOUSE = "f4ee23d7-abbb-4ba3-8baf-75b7c6c0b964"
BILLING = "0c9a7b6e-5d4c-4b3a-8f2e-1d0c9b8a7f6e"


def package_json(**info: Any) -> dict[str, Any]:
    """A realistic package.json: npm fields around steamHarness, in an author's key order."""
    project_info = {
        "projectId": SHOP,
        "name": "Corner shop",
        "type": "kanban",
        "relatedProjects": [
            {
                "alias": "inventory",
                "projectId": WAREHOUSE,
                "grantToRelatedProject": {"read": {"mode": "all"}, "write": {"mode": "none"}},
            },
            {
                "alias": "billing",
                "projectId": BILLING,
                "grantToRelatedProject": {
                    "read": {"mode": "prefixes", "prefixes": ["invoice:", "order:"]},
                    "write": {"mode": "none"},
                    "knowledge": {"read": {"mode": "all"}, "write": {"mode": "none"}},
                    "entrypoints": {"mode": "prefixes", "prefixes": ["kb_"]},
                },
            },
        ],
    }
    project_info.update(info)
    return {
        "name": "corner-shop-board",
        "version": "1.2.0",
        "private": True,
        "scripts": {"build": "vite build"},
        "steamHarness": {"projectInfo": project_info, "kanban": {"entry": "dist/index.html"}},
        "devDependencies": {"vite": "^5.0.0"},
    }


def write_package(
    folder: Path, document: dict[str, Any], files: dict[str, bytes] | None = None
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    for relative, content in (files or {}).items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return folder


PLUGIN_FILES = {
    "dist/index.html": b"<!doctype html><script src='app.js'></script>",
    "dist/app.js": b"window.steamHarnessKanban.kv.getValue('x');",
    "dist/assets/logo.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>",
    "dist/assets/fonts/inter.woff2": bytes(range(256)),
}


@pytest.fixture
def shop_package(tmp_path: Path) -> Path:
    return write_package(
        tmp_path / "shop",
        package_json(),
        {
            **PLUGIN_FILES,
            "dist/.DS_Store": b"finder noise",
            "dist/.cache/x.js": b"hidden folder",
            "src/main.ts": b"source outside the entry's folder",
            "README.md": b"# Corner shop",
        },
    )


def test_importing_creates_the_project_its_declarations_and_plugin_files(
    shop_package: Path,
) -> None:
    project = project_import(path=shop_package)

    assert (str(project.id), project.name, project.type, project.kanban_entry) == (
        SHOP,
        "Corner shop",
        "kanban",
        "dist/index.html",
    )
    assert declarations_of(project) == [
        Declaration("inventory", uuid.UUID(WAREHOUSE), Grant()),
        Declaration(
            "billing",
            uuid.UUID(BILLING),
            Grant(
                read=Rule("prefixes", ("invoice:", "order:")),
                knowledge_read=Rule("all"),
                entrypoints=Rule("prefixes", ("kb_",)),
            ),
        ),
    ]
    stored = {f.path: f for f in PluginFile.objects.filter(project=project)}
    assert sorted(stored) == sorted(PLUGIN_FILES)
    index = stored["dist/index.html"]
    assert bytes(index.content) == PLUGIN_FILES["dist/index.html"]
    assert (index.content_type, index.size) == ("text/html", len(PLUGIN_FILES["dist/index.html"]))
    assert stored["dist/app.js"].content_type == "text/javascript"
    assert len(index.sha256) == 64


def test_import_then_export_round_trips_to_identical_json_and_files(
    shop_package: Path, tmp_path: Path
) -> None:
    project = project_import(path=shop_package)

    exported = project_export(project_id=project.id, path=tmp_path / "out")

    original = (shop_package / "package.json").read_text(encoding="utf-8")
    assert (exported / "package.json").read_text(encoding="utf-8") == original
    written = {
        path.relative_to(exported).as_posix(): path.read_bytes()
        for path in exported.rglob("*")
        if path.is_file() and path.name != "package.json"
    }
    assert written == PLUGIN_FILES


def test_a_minimal_package_round_trips_too(tmp_path: Path) -> None:
    document = {
        "steamHarness": {
            "projectInfo": {
                "projectId": SHOP,
                "name": "Flow",
                "type": "workflow",
                "relatedProjects": [{"alias": "inventory", "projectId": WAREHOUSE}],
            }
        }
    }
    folder = write_package(tmp_path / "flow", document, {"index.html": b"not a kanban"})

    project = project_import(path=folder)
    exported = project_export(project_id=project.id, path=tmp_path / "out")

    assert json.loads((exported / "package.json").read_text()) == document
    assert not PluginFile.objects.filter(project=project).exists()
    assert sorted(p.name for p in exported.iterdir()) == ["package.json"]


def test_export_writes_what_the_admin_changed_since_the_import(
    shop_package: Path, tmp_path: Path
) -> None:
    project = project_import(path=shop_package)
    a_declaration(
        project, "inventory", uuid.UUID(WAREHOUSE), Grant(write=Rule("prefixes", ("stock:",)))
    )
    project.name = "Shop on the corner"
    project.save()

    exported = project_export(project_id=project.id, path=tmp_path / "out")

    document = json.loads((exported / "package.json").read_text())
    info = document["steamHarness"]["projectInfo"]
    assert info["name"] == "Shop on the corner"
    assert info["relatedProjects"][0] == {
        "alias": "inventory",
        "projectId": WAREHOUSE,
        "grantToRelatedProject": {
            "read": {"mode": "all"},
            "write": {"mode": "prefixes", "prefixes": ["stock:"]},
        },
    }
    # The untouched declaration keeps its original spelling, the other fields their place.
    assert (
        info["relatedProjects"][1]
        == package_json()["steamHarness"]["projectInfo"]["relatedProjects"][1]
    )
    assert list(document) == list(package_json())


def test_a_project_made_in_the_admin_exports_a_fresh_package(
    make_project: MakeProject, tmp_path: Path
) -> None:
    board = make_project("Board")
    a_declaration(board, "inventory", uuid.UUID(WAREHOUSE))

    exported = project_export(project_id=board.id, path=tmp_path / "out")

    assert json.loads((exported / "package.json").read_text()) == {
        "steamHarness": {
            "projectInfo": {
                "projectId": str(board.id),
                "name": "Board",
                "type": "kanban",
                "relatedProjects": [
                    {
                        "alias": "inventory",
                        "projectId": WAREHOUSE,
                        "grantToRelatedProject": {
                            "read": {"mode": "all"},
                            "write": {"mode": "none"},
                        },
                    }
                ],
            },
            "kanban": {"entry": "index.html"},
        }
    }


def test_importing_again_updates_in_place_and_keeps_memberships(
    shop_package: Path, alice: AbstractUser
) -> None:
    project = project_import(path=shop_package)
    membership_set(user=alice, project=project, role="developer")
    document = package_json(name="Renamed shop")
    document["steamHarness"]["projectInfo"]["relatedProjects"].pop(0)
    write_package(shop_package, document)
    (shop_package / "dist/assets/logo.svg").unlink()

    again = project_import(path=shop_package)

    assert again.id == project.id and Project.objects.count() == 1
    assert again.name == "Renamed shop"
    assert [d.alias for d in declarations_of(again)] == ["billing"]
    assert "dist/assets/logo.svg" not in set(
        PluginFile.objects.filter(project=again).values_list("path", flat=True)
    )
    assert role_of(user=alice, project=again) == "developer"


def test_importing_again_stops_and_names_a_relationship_an_administrator_added_since(
    shop_package: Path, tmp_path: Path
) -> None:
    shop = project_import(path=shop_package)
    a_declaration(shop, "ledger", uuid.UUID(int=7), Grant(read=Rule("all")))

    with pytest.raises(KanbanError) as caught:
        project_import(path=shop_package)

    assert caught.value.code == "conflict"
    (problem,) = caught.value.details["problems"]
    assert problem["path"] == "steamHarness.projectInfo.relatedProjects[alias=ledger]"
    assert "made in the database since the last import" in problem["message"]
    assert "drop it" in problem["message"]
    assert "ledger" in [d.alias for d in declarations_of(shop)], "nothing was changed"

    # Exported back into the package, the administrator's change survives the next import.
    project_export(project_id=shop.id, path=shop_package, overwrite=True)
    again = project_import(path=shop_package)
    assert [d.alias for d in declarations_of(again)] == ["inventory", "billing", "ledger"]


def test_a_grant_changed_in_the_database_is_named_and_kept_unless_replacing_is_asked_for(
    shop_package: Path,
) -> None:
    shop = project_import(path=shop_package)
    a_declaration(
        shop, "inventory", uuid.UUID(WAREHOUSE), Grant(write=Rule("prefixes", ("order:",)))
    )

    with pytest.raises(KanbanError) as caught:
        project_import(path=shop_package)
    (problem,) = caught.value.details["problems"]
    assert "'inventory'" in problem["message"] and "change it" in problem["message"]

    replaced = project_import(path=shop_package, replace_database_changes=True)
    assert declarations_of(replaced)[0] == Declaration("inventory", uuid.UUID(WAREHOUSE), Grant())


def test_a_project_made_in_the_database_is_not_silently_overwritten_by_a_package_of_its_uuid(
    shop_package: Path, make_project: MakeProject
) -> None:
    make_project("Accounts", project_id=uuid.UUID(SHOP))

    with pytest.raises(KanbanError) as caught:
        project_import(path=shop_package)

    paths = [p["path"] for p in caught.value.details["problems"]]
    assert "steamHarness.projectInfo.name" in paths
    assert Project.objects.get(pk=SHOP).name == "Accounts"


def test_another_package_under_the_same_project_id_does_not_quietly_replace_it(
    shop_package: Path, tmp_path: Path
) -> None:
    """An import over a project last imported from another package once succeeded
    without a word, and quietly replaced one plugin with another."""
    project_import(path=shop_package)
    other = package_json()
    other["name"] = "someone-elses-plugin"
    impostor = write_package(tmp_path / "impostor", other, PLUGIN_FILES)

    with pytest.raises(KanbanError) as caught:
        project_import(path=impostor)

    (problem,) = caught.value.details["problems"]
    assert problem["path"] == "name" and "corner-shop-board" in problem["message"]
    assert json.loads(Project.objects.get(pk=SHOP).package_json)["name"] == "corner-shop-board"
    project_import(path=impostor, replace_database_changes=True)
    assert json.loads(Project.objects.get(pk=SHOP).package_json)["name"] == "someone-elses-plugin"


def test_an_imported_declaration_is_pending_until_the_other_side_exists_and_points_back(
    shop_package: Path, make_project: MakeProject, tmp_path: Path
) -> None:
    shop = project_import(path=shop_package)
    warehouse_package = write_package(
        tmp_path / "warehouse",
        {
            "steamHarness": {
                "projectInfo": {
                    "projectId": WAREHOUSE,
                    "name": "Warehouse",
                    "type": "workflow",
                    "relatedProjects": [{"alias": "shop", "projectId": SHOP}],
                }
            }
        },
    )

    def status() -> RelationshipStatus:
        return relationship_statuses(
            project_id=shop.id, related_project_ids=[uuid.UUID(WAREHOUSE)]
        )[uuid.UUID(WAREHOUSE)]

    assert status() == RelationshipStatus.TARGET_UNKNOWN
    project_import(path=warehouse_package)
    assert status() == RelationshipStatus.CONFIRMED


def test_an_invalid_package_lists_every_problem_with_its_json_path_and_changes_nothing(
    shop_package: Path,
) -> None:
    project = project_import(path=shop_package)
    before = (declarations_of(project), sorted(project.plugin_files.values_list("sha256", "path")))
    document = package_json(name="", type="board")
    related = document["steamHarness"]["projectInfo"]["relatedProjects"]
    related[1]["alias"] = "Billing Dept"
    related[1]["grantToRelatedProject"]["write"] = {"mode": "prefixes", "prefixes": []}
    related.append({"alias": "inventory", "projectId": SHOP})
    write_package(shop_package, document, {"dist/app.js": b"changed"})

    with pytest.raises(KanbanError) as caught:
        project_import(path=shop_package)

    assert caught.value.code == "invalid_argument"
    assert caught.value.details["problems"] == [
        {
            "path": "steamHarness.projectInfo.name",
            "message": "name must be a non-empty string",
        },
        {
            "path": "steamHarness.projectInfo.type",
            "message": "type must be one of kanban, workflow, conversation, not 'board'",
        },
        {
            "path": "steamHarness.projectInfo.relatedProjects[1].alias",
            "message": "alias 'Billing Dept' must match [a-z][a-z0-9_-]{0,63}",
        },
        {
            "path": "steamHarness.projectInfo.relatedProjects[1]"
            ".grantToRelatedProject.write.prefixes",
            "message": "write.prefixes needs at least 1 prefix with mode 'prefixes'",
        },
        {
            "path": "steamHarness.projectInfo.relatedProjects[2].alias",
            "message": "alias 'inventory' is already used by relationship 1",
        },
        {
            "path": "steamHarness.projectInfo.relatedProjects[2].projectId",
            "message": "projectId must name another project, not this one",
        },
    ]
    project.refresh_from_db()
    assert project.name == "Corner shop"
    after = (declarations_of(project), sorted(project.plugin_files.values_list("sha256", "path")))
    assert after == before


@pytest.mark.parametrize(
    ("document", "where", "message"),
    [
        ([1, 2], "package.json", "must hold a JSON object"),
        ({"name": "x"}, "steamHarness", "must be a JSON object"),
        (
            {"steamHarness": {"projectInfo": []}},
            "steamHarness.projectInfo",
            "must be a JSON object",
        ),
        (
            {"steamHarness": {"projectInfo": {"projectId": "nope", "name": "x", "type": "kanban"}}},
            "steamHarness.projectInfo.projectId",
            "projectId 'nope' is not a UUID",
        ),
    ],
    ids=["array", "no-steamHarness", "projectInfo-array", "bad-uuid"],
)
def test_malformed_manifests_are_reported_where_they_go_wrong(
    tmp_path: Path, document: Any, where: str, message: str
) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "package.json").write_text(json.dumps(document))

    with pytest.raises(KanbanError) as caught:
        project_import(path=folder)

    assert {"path": where, "message": message} in caught.value.details["problems"]
    assert not Project.objects.exists()


def test_a_folder_without_valid_json_is_refused_saying_the_line_and_column(
    tmp_path: Path,
) -> None:
    (tmp_path / "package.json").write_text('{\n  "name": "x",\n  \'not\': json\n}')
    with pytest.raises(KanbanError) as caught:
        project_import(path=tmp_path)
    (problem,) = caught.value.details["problems"]
    assert problem["path"] == "package.json"
    assert "line 3, column 3" in problem["message"], problem

    with pytest.raises(KanbanError) as caught:
        project_import(path=tmp_path / "missing")
    assert caught.value.details["problems"][0]["message"] == "is not a folder"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("../outside/index.html", "must not contain empty, '.' or '..' segments"),
        ("/etc/index.html", "must be relative, not absolute"),
        (".hidden/index.html", "names a hidden file"),
        ("dist\\index.html", "must not contain backslashes or control characters"),
        ("dist/missing.html", "entry file 'dist/missing.html' is missing"),
    ],
)
def test_plugin_entries_outside_the_package_or_hidden_are_refused(
    tmp_path: Path, entry: str, message: str
) -> None:
    document = package_json()
    document["steamHarness"]["kanban"]["entry"] = entry
    folder = write_package(tmp_path / "shop", document, PLUGIN_FILES)

    with pytest.raises(KanbanError) as caught:
        project_import(path=folder)

    (problem,) = caught.value.details["problems"]
    assert problem["path"] == "steamHarness.kanban.entry"
    assert message in problem["message"]


def test_links_and_oversized_files_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not part of any plugin")
    folder = write_package(tmp_path / "shop", package_json(), PLUGIN_FILES)
    os.symlink(secret, folder / "dist" / "leak.txt")
    monkeypatch.setattr(packages, "MAX_PLUGIN_FILE_BYTES", 200)

    with pytest.raises(KanbanError) as caught:
        project_import(path=folder)

    assert sorted(caught.value.details["problems"], key=lambda p: p["path"]) == [
        {"path": "dist/assets/fonts/inter.woff2", "message": "is larger than 200 bytes"},
        {"path": "dist/leak.txt", "message": "only regular files are imported (no links)"},
    ]


@pytest.mark.parametrize("link", ["dist", "dist/nested"])
def test_an_entry_reached_through_a_linked_folder_is_refused_and_serves_nothing(
    tmp_path: Path, link: str, client: Client
) -> None:
    """The red team's package: a relative link (it survives a git clone) to a folder
    outside the package, and an entry below it."""
    outside = tmp_path / "outside" / "secretdir"
    outside.mkdir(parents=True)
    (outside / "index.html").write_text("<!doctype html>")
    (outside / "secret.txt").write_text("not part of any plugin")
    document = package_json()
    document["steamHarness"]["kanban"]["entry"] = f"{link}/secretdir/index.html"
    folder = write_package(tmp_path / "pkg" / "shop", document)
    (folder / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(outside.parent, (folder / link).parent), folder / link)

    with pytest.raises(KanbanError) as caught:
        project_import(path=folder)

    (problem,) = caught.value.details["problems"]
    assert problem == {
        "path": "steamHarness.kanban.entry",
        "message": f"folder '{link}/secretdir' is a link",
    }
    assert not Project.objects.filter(id=SHOP).exists()
    assert client.get(f"/plugins/{SHOP}/{link}/secretdir/secret.txt").status_code == 404


def test_a_folder_swapped_for_a_link_while_importing_never_reads_outside_files(
    tmp_path: Path,
) -> None:
    """The red team's race: a subfolder swapped back and forth between a real folder and a
    link to an outside folder, as fast as possible, while the package is read. A check of
    each path before opening it loses the race now and then; the walk on descriptors never
    does."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET outside the package")
    folder = write_package(tmp_path / "shop", package_json(), PLUGIN_FILES)
    sub, real, link = (folder / "dist" / name for name in ("sub", "sub-real", "sub-link"))
    sub.mkdir()
    (sub / "secret.txt").write_text("harmless")
    os.symlink(outside, link)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():  # each rename is atomic; sub is a folder, then a link
            os.rename(sub, real)
            os.rename(link, sub)
            os.rename(sub, link)
            os.rename(real, sub)

    swapper = threading.Thread(target=swap)
    swapper.start()
    leaked = crashed = 0
    try:
        for _ in range(1500):  # the old walk leaked about once in a thousand reads
            try:
                package = read_package(folder)
            except KanbanError:
                continue  # a swap can make a read refuse, saying why; it must never leak
            except OSError:
                crashed += 1  # nor crash (import_project --watch died of this)
                continue
            leaked += any(b"SECRET" in source.content for source in package.files)
    finally:
        stop.set()
        swapper.join()
    assert (leaked, crashed) == (0, 0)


def test_a_linked_package_json_is_refused(tmp_path: Path) -> None:
    elsewhere = write_package(tmp_path / "elsewhere", package_json(), PLUGIN_FILES)
    folder = write_package(tmp_path / "shop", package_json(), PLUGIN_FILES)
    (folder / "package.json").unlink()
    os.symlink(elsewhere / "package.json", folder / "package.json")

    with pytest.raises(KanbanError) as caught:
        project_import(path=folder)

    assert caught.value.details["problems"] == [{"path": "package.json", "message": "is a link"}]


def test_too_many_plugin_files_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_package(tmp_path / "shop", package_json(), PLUGIN_FILES)
    monkeypatch.setattr(packages, "MAX_PLUGIN_FILES", 3)

    with pytest.raises(KanbanError) as caught:
        project_import(path=folder)

    assert caught.value.details["problems"][0]["message"].startswith("a plugin is at most 3 files")


def test_plugin_files_are_read_by_project_and_path(shop_package: Path) -> None:
    project = project_import(path=shop_package)

    found = plugin_file_read(project_id=project.id, path="dist/assets/logo.svg")

    assert (found.content_type, bytes(found.content)) == (
        "image/svg+xml",
        PLUGIN_FILES["dist/assets/logo.svg"],
    )
    for path, code in [
        ("dist/nothing.js", "not_found"),
        ("dist/../package.json", "invalid_argument"),
        ("/dist/app.js", "invalid_argument"),
        ("dist/.DS_Store", "invalid_argument"),
    ]:
        with pytest.raises(KanbanError) as caught:
            plugin_file_read(project_id=project.id, path=path)
        assert caught.value.code == code, path
    with pytest.raises(KanbanError):
        plugin_file_read(project_id=uuid.uuid4(), path="dist/app.js")


def test_export_refuses_a_folder_in_use_unless_told_to_overwrite(
    shop_package: Path, tmp_path: Path
) -> None:
    project = project_import(path=shop_package)
    target = tmp_path / "out"
    target.mkdir()
    (target / "notes.txt").write_text("mine")

    with pytest.raises(KanbanError) as caught:
        project_export(project_id=project.id, path=target)
    assert caught.value.code == "conflict"
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]

    project_export(project_id=project.id, path=target, overwrite=True)
    assert (target / "notes.txt").read_text() == "mine"
    assert (target / "dist" / "index.html").is_file()

    with pytest.raises(KanbanError) as caught:
        project_export(project_id=uuid.uuid4(), path=tmp_path / "other")
    assert caught.value.code == "not_found"


def test_neither_import_nor_export_touches_kv(shop_package: Path, tmp_path: Path) -> None:
    project = project_import(path=shop_package)
    address = project_kv(project.id, "stock:1")
    engine.commit([set_value(address, {"count": 8})])

    exported = project_export(project_id=project.id, path=tmp_path / "out")
    project_import(path=exported)

    stored = engine.get_value(address)
    assert stored is not None and stored.value == {"count": 8}
    assert "count" not in "".join(
        path.read_text(errors="replace") for path in exported.rglob("*") if path.is_file()
    )


@pytest.mark.parametrize(
    "name",
    ["Shop\x00", "Shop\x1b[31m", "\u202eplh\u202c Shop", "Shop \u2067isolate\u2069"],
)
def test_a_project_name_that_would_display_as_something_else_is_refused(
    tmp_path: Path, name: str
) -> None:
    """Red team, Low 10 and 11: a NUL in the name was a traceback from import_project, and
    bidirectional overrides were accepted."""
    folder = write_package(tmp_path / "shop", package_json(name=name), PLUGIN_FILES)

    with pytest.raises(KanbanError) as caught:
        project_import(path=folder)

    (problem,) = caught.value.details["problems"]
    assert problem["path"] == "steamHarness.projectInfo.name"
    assert "bidirectional overrides" in problem["message"]
    assert not Project.objects.filter(id=SHOP).exists()


def test_declared_entrypoints_are_imported_and_bad_ones_are_named(tmp_path: Path) -> None:
    document = package_json()
    document["steamHarness"]["entrypoints"] = [{"id": "main", "title": "Full"}, {"id": "kb_x"}]
    project = project_import(path=write_package(tmp_path / "good", document, PLUGIN_FILES))
    assert [e.as_dict() for e in declared_entrypoints(project)] == [
        {"id": "main", "title": "Full"},
        {"id": "kb_x", "title": "kb_x"},
    ]

    document["steamHarness"]["entrypoints"] = [{"id": "a b"}, {"id": "main"}, {"id": "main"}, 3]
    with pytest.raises(KanbanError) as caught:
        project_import(path=write_package(tmp_path / "bad", document, PLUGIN_FILES))
    paths = [problem["path"] for problem in caught.value.details["problems"]]
    assert paths == [
        "steamHarness.entrypoints[0]",
        "steamHarness.entrypoints[2]",
        "steamHarness.entrypoints[3]",
    ]
    assert [e.id for e in declared_entrypoints(Project.objects.get(pk=project.pk))] == [
        "main",
        "kb_x",
    ]


# --- what an import serves -------------------------------------------------------------------


def test_an_import_serves_what_the_page_loads_and_none_of_the_developers_files(
    tmp_path: Path, client: Client
) -> None:
    page = {
        **PLUGIN_FILES,
        "dist/app.js.map": b"{}",
        "dist/data/stock.json": b"[]",
        "dist/help.md": b"# Help, shown by the page",
        "dist/LICENSE": b"MIT",
    }
    developer = {
        "dist/README.md": b"# how to develop this",
        "dist/readme.txt": b"how to develop this",
        "dist/CHANGELOG.md": b"## 1.2.0",
        "dist/app.test.mjs": b"import { test } from 'node:test';",
        "dist/app.spec.js": b"describe()",
        "dist/tests/helpers.mjs": b"export {}",
        "dist/assets/test/fixture.json": b"{}",
        "dist/__tests__/app.js": b"test()",
        "dist/kanban-testing.mjs": b"export function createTestHost() {}",
        "dist/kanban.d.ts": b"declare const k: unknown;",
        "dist/app.ts": b"const typed: number = 1;",
        "dist/tsconfig.json": b"{}",
        "dist/tsconfig.build.json": b"{}",
        "dist/jsconfig.json": b"{}",
        "dist/package.json": b"{}",
        "dist/package-lock.json": b"{}",
        "dist/npm-shrinkwrap.json": b"{}",
        "dist/yarn.lock": b"",
        "dist/pnpm-lock.yaml": b"",
        "dist/eslint.config.mjs": b"export default []",
    }
    folder = write_package(tmp_path / "shop", package_json(), {**page, **developer})

    project = project_import(path=folder)

    served = set(PluginFile.objects.filter(project=project).values_list("path", flat=True))
    assert served == set(page)
    assert client.get(f"/plugins/{SHOP}/dist/README.md").status_code == 404
    exported = project_export(project_id=project.id, path=tmp_path / "out")
    assert project_import(path=exported) == project, "the export imports again as it is"
    assert set(PluginFile.objects.filter(project=project).values_list("path", flat=True)) == served


def test_the_entry_is_served_whatever_its_name(tmp_path: Path) -> None:
    document = package_json()
    document["steamHarness"]["kanban"]["entry"] = "dist/index.test.html"
    folder = write_package(
        tmp_path / "shop", document, {"dist/index.test.html": b"<!doctype html>"}
    )

    project = project_import(path=folder)

    assert list(project.plugin_files.values_list("path", flat=True)) == ["dist/index.test.html"]
