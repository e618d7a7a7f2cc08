"""The staff data viewers in Django admin, through Django's test client: the KV viewer pages
through a dataset with bounded scans and shows each entry's last write source; the documents
browser pages through a project's Knowledge base and shows one document in full."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import AbstractUser, Permission
from django.test import Client

from kanban.access.memberships import membership_set
from kanban.data.knowledge import project_knowledge_create
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from kanban.models import Project
from storage import engine
from storage.knowledge import knowledge_create
from storage.kv import Dataset, kv_delete, kv_set
from tests.factories import a_user
from tests.kanban.conftest import MakeProject

pytestmark = pytest.mark.django_db

KV_VIEWER = "/admin/kanban/project/kv-viewer/"


def documents_url(project: Project) -> str:
    return f"/admin/kanban/project/{project.id}/documents/"


def client_for(user: AbstractUser) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def root(db: None) -> AbstractUser:
    return a_user("root", superuser=True)


@pytest.fixture
def staff(root: AbstractUser) -> Client:
    return client_for(root)


@pytest.fixture
def board(make_project: MakeProject, alice: AbstractUser) -> Project:
    project = make_project("Board")
    membership_set(user=alice, project=project, role="owner")
    return project


def keys_on(html: str) -> list[str]:
    return re.findall(r'<td class="entry-key">([^<]*)</td>', html)


def next_link(html: str) -> str | None:
    found = re.search(r'<a href="([^"]*)" rel="next">', html)
    return None if found is None else found.group(1).replace("&amp;", "&")


# --- who may look ------------------------------------------------------------------------------


@pytest.mark.parametrize("url", [KV_VIEWER, "documents", "document"])
def test_people_who_are_not_staff_are_sent_to_the_admin_login(
    alice: AbstractUser, board: Project, url: str
) -> None:
    knowledge_create(project_id=board.id, title="D", markdown="m", document_id="d", source={})
    target = {
        KV_VIEWER: f"{KV_VIEWER}?project={board.id}",
        "documents": documents_url(board),
        "document": documents_url(board) + "d/",
    }[url]
    response = client_for(alice).get(target)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
    assert Client().get(target).status_code == 302


def test_staff_without_the_view_project_permission_are_forbidden(board: Project) -> None:
    clerk = a_user("clerk", staff=True)
    assert client_for(clerk).get(KV_VIEWER).status_code == 403
    clerk.user_permissions.add(Permission.objects.get(codename="view_project"))
    assert client_for(clerk).get(KV_VIEWER).status_code == 200


def test_the_viewers_are_linked_from_the_admin_index_and_the_project_page(
    staff: Client, board: Project
) -> None:
    index = staff.get("/admin/").content.decode()
    assert f'href="{KV_VIEWER}"' in index
    change = staff.get(f"/admin/kanban/project/{board.id}/change/").content.decode()
    assert f'href="{KV_VIEWER}?project={board.id}"' in change
    assert f'href="{documents_url(board)}"' in change


# --- the KV viewer -----------------------------------------------------------------------------


def test_250_keys_come_in_pages_of_100_without_a_full_load(staff: Client, board: Project) -> None:
    dataset = Dataset(board.id, "kv")
    for n in range(250):
        kv_set(dataset=dataset, key=f"card:{n:03d}", value={"n": n}, source={})

    seen: list[str] = []
    url: str | None = f"{KV_VIEWER}?project={board.id}&dataset=kv"
    pages = 0
    while url is not None:
        with engine.recording_reads() as reads:
            html = staff.get(url).content.decode()
        assert [read.op for read in reads] == ["scan"], "one bounded scan per page"
        page_keys = keys_on(html)
        seen.extend(page_keys)
        pages += 1
        link = next_link(html)
        url = None if link is None else KV_VIEWER + link
    assert pages == 3
    assert seen == [f"card:{n:03d}" for n in range(250)]


def test_a_prefix_narrows_the_keys(staff: Client, board: Project) -> None:
    dataset = Dataset(board.id, "kv")
    for key in ("card:1", "card:2", "column:todo", "cards"):
        kv_set(dataset=dataset, key=key, value=1, source={})
    html = staff.get(KV_VIEWER, {"project": str(board.id), "prefix": "card:"}).content.decode()
    assert keys_on(html) == ["card:1", "card:2"]
    assert next_link(html) is None


def test_the_viewer_shows_value_preview_revision_and_last_write_source(
    staff: Client, board: Project, alice: AbstractUser
) -> None:
    revision = project_kv_set(
        target=Target(
            user=alice, project_id=board.id, domain="persistentValue", conversation_id="conv-7"
        ),
        key="notes",
        value={"text": "x" * 1000},
        provenance=Provenance(via="bridge", page=f"/boards/{board.id}/"),
    )
    html = staff.get(
        KV_VIEWER,
        {"project": str(board.id), "dataset": "persistentValue", "conversation": "conv-7"},
    ).content.decode()
    assert keys_on(html) == ["notes"]
    assert f"<td>{revision}</td>" in html
    assert "x" * 150 in html and "x" * 1000 not in html, "the value is previewed, truncated"
    for label, text in [
        ("user", "alice"),
        ("via", "bridge"),
        ("consumer project", str(board.id)),
        ("page", f"/boards/{board.id}/"),
        ("conversation", "conv-7"),
    ]:
        assert f"<dt>{label}</dt><dd>{text}</dd>" in html
    # The four datasets are separate: the project-scope PersistentValue has no such key.
    project_scope = staff.get(
        KV_VIEWER, {"project": str(board.id), "dataset": "persistentValue"}
    ).content.decode()
    assert keys_on(project_scope) == []


def test_an_unknown_project_or_bad_conversation_is_reported_not_raised(
    staff: Client, board: Project
) -> None:
    missing = staff.get(KV_VIEWER, {"project": "00000000-0000-4000-8000-000000000000"})
    assert missing.status_code == 200 and "No such project." in missing.content.decode()
    bad = staff.get(KV_VIEWER, {"project": str(board.id), "conversation": "a\x00b"})
    assert bad.status_code == 200 and "errornote" in bad.content.decode()


@pytest.mark.parametrize("field", ["after", "prefix"])
def test_a_nul_in_the_page_or_prefix_is_reported_not_a_server_error(
    staff: Client, board: Project, field: str
) -> None:
    """Red team, Low 10: ``?after=%00`` answered 500 (PostgreSQL refuses NUL in text)."""
    response = staff.get(KV_VIEWER, {"project": str(board.id), field: "card:\x00"})
    assert response.status_code == 200 and "errornote" in response.content.decode()


# --- the documents browser ---------------------------------------------------------------------


def test_documents_page_with_the_opaque_cursor_and_show_their_source(
    staff: Client, board: Project, alice: AbstractUser
) -> None:
    for n in range(30):
        knowledge_create(project_id=board.id, title=f"Doc {n:02d}", markdown=f"body {n}", source={})
    project_knowledge_create(
        target=Target(user=alice, project_id=board.id),
        title="Runbook",
        markdown="# Runbook\nRestart the worker.",
        document_id="runbook",
        provenance=Provenance(via="api"),
    )
    first = staff.get(documents_url(board)).content.decode()
    assert "31 documents." in first
    assert first.count("Doc ") == 25
    link = next_link(first)
    assert link is not None and link.startswith("?cursor=")
    second = staff.get(documents_url(board) + link).content.decode()
    assert "Doc 29" in second and "Doc 00" not in second
    assert "# Runbook" in second, "the preview is shown"
    assert "<dt>user</dt><dd>alice</dd>" in second and "<dt>via</dt><dd>api</dd>" in second
    assert next_link(second) is None


def test_listing_documents_never_reads_a_body(staff: Client, board: Project) -> None:
    knowledge_create(project_id=board.id, title="Big", markdown="x" * 100_000, source={})
    with engine.recording_reads() as reads:
        html = staff.get(documents_url(board)).content.decode()
    assert "Big" in html
    gets = [r.address.key for r in reads if r.op == "get"]
    assert gets[0] == "knowledge.documents" and len(gets) == 2
    assert gets[1].startswith("knowledge.documents.page."), "the index and its page only"
    assert [r.address.key for r in reads if r.op == "last_write"] == ["knowledge.document.doc-1"]


def test_one_document_is_shown_in_full(staff: Client, board: Project, alice: AbstractUser) -> None:
    project_knowledge_create(
        target=Target(user=alice, project_id=board.id),
        title="Runbook",
        markdown="# Runbook\n" + "line\n" * 500 + "<script>alert(1)</script>",
        document_id="runbook",
        provenance=Provenance(via="api"),
    )
    html = staff.get(documents_url(board) + "runbook/").content.decode()
    assert "line\n" * 500 in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html
    assert "<dt>user</dt><dd>alice</dd>" in html
    assert staff.get(documents_url(board) + "missing/").status_code == 404
    assert staff.get(documents_url(board) + "?cursor=garbage").status_code == 200


def test_an_unknown_project_is_not_found(staff: Client) -> None:
    url = "/admin/kanban/project/00000000-0000-4000-8000-000000000000/documents/"
    assert staff.get(url).status_code == 404


HISTORY = "/admin/kanban/project/kv-viewer/history/"


def history_of(staff: Client, board: Project, key: str) -> str:
    response = staff.get(HISTORY, {"project": str(board.id), "dataset": "kv", "key": key})
    assert response.status_code == 200
    return response.content.decode()


def restore(staff: Client, board: Project, key: str, revision: str, expected: str) -> str:
    form = {"project": str(board.id), "dataset": "kv", "conversation": "", "key": key}
    response = staff.post(HISTORY, {**form, "revision": revision, "expected": expected})
    assert response.status_code == 302
    return staff.get(response["Location"].replace("?", HISTORY + "?", 1)).content.decode()


def test_staff_restore_a_keys_earlier_version_over_the_revision_they_saw(
    staff: Client, board: Project, alice: AbstractUser
) -> None:
    """#26.1: the KV viewer's history, with Restore this version (compare-and-set)."""
    dataset = Dataset(board.id)
    first = kv_set(dataset=dataset, key="card:c1", value={"title": "Old"}, source={"user": "alice"})
    second = kv_set(dataset=dataset, key="card:c1", value={"title": "New"}, source={"user": "bob"})
    viewer = staff.get(KV_VIEWER, {"project": str(board.id), "dataset": "kv"}).content.decode()
    assert "kv-viewer/history/?project=" in viewer and "key=card%3Ac1" in viewer
    page = history_of(staff, board, "card:c1")
    assert re.findall(r'<td class="version-revision">(\d+)</td>', page) == [second, first]
    assert page.count('value="Restore this version"') == 1, "not for the current version"

    # bob writes again after the page was shown: restoring over what it showed is refused.
    third = kv_set(dataset=dataset, key="card:c1", value={"title": "Newer"}, source={"user": "bob"})
    refused = restore(staff, board, "card:c1", first, expected=second)
    assert "changed since that page was shown" in refused
    assert engine.get_value(dataset.address("card:c1")).value == {"title": "Newer"}  # type: ignore[union-attr]

    done = restore(staff, board, "card:c1", first, expected=third)
    assert f"Revision {first} restored" in done
    stored = engine.get_value(dataset.address("card:c1"))
    assert stored is not None and stored.value == {"title": "Old"}
    assert stored.source == {"via": "admin", "user": "root", "restoredFrom": first}
    assert "restored from" in history_of(staff, board, "card:c1")


def test_a_deletion_or_an_unknown_revision_is_not_restored(staff: Client, board: Project) -> None:
    dataset = Dataset(board.id)
    kept = kv_set(dataset=dataset, key="k", value=1, source={"user": "alice"})
    kv_delete(dataset=dataset, key="k", source={"user": "alice"})
    (deleted, _) = re.findall(
        r'<td class="version-revision">(\d+)</td>', history_of(staff, board, "k")
    )
    assert "no value to restore" in restore(staff, board, "k", deleted, expected="")
    assert "No such version" in restore(staff, board, "k", "999999", expected="")
    assert engine.get_value(dataset.address("k")) is None
    assert f"Revision {kept} restored" in restore(staff, board, "k", kept, expected="")
    assert engine.get_value(dataset.address("k")).value == 1  # type: ignore[union-attr]


def test_staff_who_may_only_view_see_a_history_but_restore_nothing(board: Project) -> None:
    dataset = Dataset(board.id)
    first = kv_set(dataset=dataset, key="k", value=1, source={"user": "alice"})
    current = kv_set(dataset=dataset, key="k", value=2, source={"user": "alice"})
    clerk = a_user("clerk", staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_project"))
    form = {"project": str(board.id), "dataset": "kv", "key": "k"}
    assert client_for(clerk).get(HISTORY, form).status_code == 200
    refused = client_for(clerk).post(HISTORY, {**form, "revision": first, "expected": current})
    assert refused.status_code == 403
    assert engine.get_value(dataset.address("k")).value == 2  # type: ignore[union-attr]


def test_staff_purge_a_keys_kept_versions_and_the_project_gets_their_room_back(
    staff: Client, board: Project
) -> None:
    """M4: a deleted key's versions count toward the project's quota until purged."""
    dataset = Dataset(board.id)
    kv_set(dataset=dataset, key="blob", value="x" * 1000, source={"user": "alice"})
    kv_delete(dataset=dataset, key="blob", source={"user": "alice"})
    assert engine.project_bytes(f"project.{board.id}.") == 1002
    assert 'value="Purge kept versions"' in history_of(staff, board, "blob")
    form = {"project": str(board.id), "dataset": "kv", "conversation": "", "key": "blob"}
    response = staff.post(HISTORY, {**form, "purge": "1"})
    assert response.status_code == 302
    page = staff.get(response["Location"].replace("?", HISTORY + "?", 1)).content.decode()
    assert "2 kept versions purged" in page and "No versions of this key are kept" in page
    assert engine.project_bytes(f"project.{board.id}.") == 0
