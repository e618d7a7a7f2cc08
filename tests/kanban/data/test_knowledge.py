"""Knowledge as users reach it: the current project by role, related projects by the
target's knowledge grant, decided per document key, with the shared index refused under a
prefix grant. Expectations are written from seed 000, not from the implementation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AbstractUser

from kanban.access.decision import Op
from kanban.access.grant_rules import ALL, NONE, Grant, Rule
from kanban.access.memberships import membership_set
from kanban.data.knowledge import (
    access_knowledge,
    project_knowledge_create,
    project_knowledge_delete,
    project_knowledge_edit,
    project_knowledge_get,
    project_knowledge_list,
    project_knowledge_read_lines,
    project_knowledge_search,
    search_slot,
)
from kanban.data.kv import Provenance, project_kv_get
from kanban.data.target import Target
from kanban.models import Project
from storage import engine
from storage.errors import KanbanError
from storage.knowledge import knowledge_create, knowledge_get
from storage.kv import Dataset
from tests.factories import a_declaration, a_project, a_user
from tests.kanban.conftest import MakeProject

pytestmark = pytest.mark.django_db

BRIDGE = Provenance("bridge", page="index.html")
SEEDED = {"via": "test"}


def outcome(call: Callable[[], Any]) -> str:
    try:
        call()
    except KanbanError as error:
        return str(error.code)
    return "ok"


def seed_documents(project: Project) -> None:
    for doc_id in ("notes-1", "secret-1"):
        knowledge_create(
            project_id=project.id,
            document_id=doc_id,
            title=doc_id,
            markdown=f"# {doc_id}\nshared text\nmore",
            source=SEEDED,
        )


@pytest.fixture
def family(make_project: MakeProject, alice: AbstractUser) -> dict[str, Project]:
    """The seed's hierarchy, parent <-> child <-> grandchild, adjacent relationships only.
    What the child grants the parent is set by each test; alice develops everywhere."""
    parent, child, grandchild = (make_project(name) for name in ("parent", "child", "grandchild"))
    both = Grant(read=ALL, write=ALL, knowledge_read=ALL, knowledge_write=ALL)
    a_declaration(parent, "child", child, both)
    a_declaration(child, "grandchild", grandchild, both)
    a_declaration(grandchild, "parent", child, both)
    for project in (parent, child, grandchild):
        membership_set(user=alice, project=project, role="developer")
        seed_documents(project)
    return {"parent": parent, "child": child, "grandchild": grandchild}


def child_grants_parent(family: dict[str, Project], grant: Grant) -> None:
    a_declaration(family["child"], "parent", family["parent"], grant)


# --- one call per operation, from the parent through "child" ---------------------------------

Call = Callable[[AbstractUser, Project], Any]


def _through_child(action: Callable[..., Any], **arguments: Any) -> Call:
    return lambda user, parent: action(
        target=Target(user=user, project_id=parent.id, alias="child"), **arguments
    )


#: name -> (reads or writes, the document it names or None, the call)
CALLS: dict[str, tuple[str, str | None, Call]] = {
    "list": ("read", None, _through_child(project_knowledge_list)),
    "search-all": ("read", None, _through_child(project_knowledge_search, query="shared")),
    "get-notes": ("read", "notes-1", _through_child(project_knowledge_get, document_id="notes-1")),
    "get-secret": (
        "read",
        "secret-1",
        _through_child(project_knowledge_get, document_id="secret-1"),
    ),
    "search-notes": (
        "read",
        "notes-1",
        _through_child(project_knowledge_search, query="shared", document_id="notes-1"),
    ),
    "search-secret": (
        "read",
        "secret-1",
        _through_child(project_knowledge_search, query="shared", document_id="secret-1"),
    ),
    "read-lines-notes": (
        "read",
        "notes-1",
        _through_child(project_knowledge_read_lines, document_id="notes-1", start_line=1),
    ),
    "read-lines-secret": (
        "read",
        "secret-1",
        _through_child(project_knowledge_read_lines, document_id="secret-1", start_line=2),
    ),
    "create-generated-id": (
        "write",
        None,
        _through_child(project_knowledge_create, title="New", markdown="x", provenance=BRIDGE),
    ),
    "create-notes-2": (
        "write",
        "notes-2",
        _through_child(
            project_knowledge_create,
            title="New",
            markdown="x",
            provenance=BRIDGE,
            document_id="notes-2",
        ),
    ),
    "create-secret-2": (
        "write",
        "secret-2",
        _through_child(
            project_knowledge_create,
            title="New",
            markdown="x",
            provenance=BRIDGE,
            document_id="secret-2",
        ),
    ),
    "edit-notes": (
        "write",
        "notes-1",
        _through_child(project_knowledge_edit, document_id="notes-1", title="T", provenance=BRIDGE),
    ),
    "edit-secret": (
        "write",
        "secret-1",
        _through_child(
            project_knowledge_edit, document_id="secret-1", title="T", provenance=BRIDGE
        ),
    ),
    "delete-notes": (
        "write",
        "notes-1",
        _through_child(project_knowledge_delete, document_id="notes-1", provenance=BRIDGE),
    ),
    "delete-secret": (
        "write",
        "secret-1",
        _through_child(project_knowledge_delete, document_id="secret-1", provenance=BRIDGE),
    ),
}

RULES = {
    "none": NONE,
    "all": ALL,
    # Knowledge prefixes are document-id prefixes, as the seed's example ("kb_") reads.
    "prefix-notes": Rule("prefixes", ("notes-",)),
    # Opens every document there is: still the shared index needs the whole rule.
    "prefix-every-document": Rule("prefixes", ("notes-", "secret-")),
}


def expected(rule: str, document: str | None) -> str:
    """From the seed: no knowledge grant grants no Knowledge; access is per document key;
    listing and searching (and so any call on the shared index) are refused under prefixes."""
    if rule == "none":
        return "forbidden"
    if rule == "all":
        return "ok"
    if document is None:
        return "forbidden"
    if rule == "prefix-notes":
        return "ok" if document.startswith("notes-") else "forbidden"
    return "ok"


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("call", CALLS)
def test_knowledge_grant_matrix(
    family: dict[str, Project], alice: AbstractUser, rule: str, call: str
) -> None:
    kind, document, action = CALLS[call]
    granted = RULES[rule]
    # A read is granted its own rule only; a write the same rule for reading too, since a
    # write naming a document needs both (its answer tells whether the document exists).
    grant = (
        Grant(knowledge_read=granted, knowledge_write=NONE)
        if kind == "read"
        else Grant(knowledge_read=granted, knowledge_write=granted)
    )
    child_grants_parent(family, grant)

    assert outcome(lambda: action(alice, family["parent"])) == expected(rule, document)


@pytest.mark.parametrize("call", [name for name, (_, doc, _) in CALLS.items() if doc is None])
def test_a_refusal_under_a_prefix_grant_names_the_shared_index_key(
    family: dict[str, Project], alice: AbstractUser, call: str
) -> None:
    prefix = Rule("prefixes", ("knowledge.",))
    child_grants_parent(family, Grant(knowledge_read=prefix, knowledge_write=prefix))
    with pytest.raises(KanbanError) as caught:
        CALLS[call][2](alice, family["parent"])
    assert caught.value.code == "forbidden"
    assert caught.value.details == {"alias": "child", "key": "knowledge.documents"}
    assert "'knowledge.documents'" in caught.value.message


def test_a_read_grant_opens_no_writes_and_a_write_grant_no_reads(
    family: dict[str, Project], alice: AbstractUser
) -> None:
    child_grants_parent(family, Grant(knowledge_read=ALL))
    results = {
        name: outcome(lambda a=action: a(alice, family["parent"]))
        for name, (_, _, action) in CALLS.items()
    }
    assert {name for name, result in results.items() if result == "ok"} == {
        name for name, (kind, _, _) in CALLS.items() if kind == "read"
    }

    child_grants_parent(family, Grant(knowledge_write=ALL))
    read_results = {
        name: outcome(lambda a=action: a(alice, family["parent"]))
        for name, (kind, _, action) in CALLS.items()
        if kind == "read"
    }
    assert set(read_results.values()) == {"forbidden"}


def test_one_person_runs_only_a_few_searches_at_once_and_others_are_not_held_up(
    family: dict[str, Project], alice: AbstractUser, bob: AbstractUser, settings: Any
) -> None:
    settings.KANBAN_SEARCHES_PER_USER = 2
    membership_set(user=bob, project=family["parent"], role="guest")
    parent = family["parent"].id
    as_alice, as_bob = Target(user=alice, project_id=parent), Target(user=bob, project_id=parent)
    with search_slot(alice.pk), search_slot(alice.pk):
        with pytest.raises(KanbanError) as caught:
            project_knowledge_search(target=as_alice, query="shared")
        assert caught.value.code == "rate_limited"
        assert project_knowledge_search(target=as_bob, query="shared") is not None
    assert project_knowledge_search(target=as_alice, query="shared") is not None


def test_a_write_only_grant_is_a_drop_box_that_learns_nothing_of_what_is_there(
    family: dict[str, Project], alice: AbstractUser
) -> None:
    """A title-only edit once returned the body's first lines, a markdown-only
    edit the old title, a taken id answered 409. Now only creating under a new id works,
    and its answer is the id and revision alone."""
    child_grants_parent(family, Grant(knowledge_write=ALL))
    through = {"target": Target(user=alice, project_id=family["parent"].id, alias="child")}

    created = project_knowledge_create(
        title="Tip", markdown="from outside", provenance=BRIDGE, **through
    )
    assert set(created.as_dict()) == {"id", "revision"}

    refusals = [
        lambda: project_knowledge_edit(
            document_id="notes-1", title="T", provenance=BRIDGE, **through
        ),
        lambda: project_knowledge_edit(
            document_id="absent", markdown="m", provenance=BRIDGE, **through
        ),
        lambda: project_knowledge_delete(document_id="notes-1", provenance=BRIDGE, **through),
        lambda: project_knowledge_delete(document_id="absent", provenance=BRIDGE, **through),
        lambda: project_knowledge_create(
            title="T", markdown="m", document_id="notes-1", provenance=BRIDGE, **through
        ),
        lambda: project_knowledge_create(
            title="T", markdown="m", document_id="fresh-id", provenance=BRIDGE, **through
        ),
    ]
    answers = []
    for refusal in refusals:
        with pytest.raises(KanbanError) as caught:
            refusal()
        answers.append((caught.value.code, caught.value.details))
    # The same answer whether the document exists or not.
    assert {code for code, _ in answers} == {"forbidden"}
    assert all(details == {"alias": "child"} for _, details in answers)


def test_a_kv_grant_alone_opens_no_knowledge(
    family: dict[str, Project], alice: AbstractUser
) -> None:
    child_grants_parent(family, Grant(read=ALL, write=ALL))
    for name, (_, _, action) in CALLS.items():
        assert outcome(lambda a=action: a(alice, family["parent"])) == "forbidden", name
    # Nor does related KV reach the documents: they live in the PersistentValue dataset.
    entry = project_kv_get(
        target=Target(user=alice, project_id=family["parent"].id, alias="child"),
        key="knowledge.document.notes-1",
    )
    assert entry is None
    with pytest.raises(KanbanError) as caught:
        project_kv_get(
            target=Target(
                user=alice, project_id=family["parent"].id, alias="child", domain="persistentValue"
            ),
            key="knowledge.document.notes-1",
        )
    assert caught.value.code == "invalid_argument"


def test_adjacent_projects_reach_each_others_knowledge_and_nothing_further(
    family: dict[str, Project], alice: AbstractUser
) -> None:
    child_grants_parent(family, Grant(knowledge_read=ALL, knowledge_write=ALL))
    summary = project_knowledge_create(
        target=Target(user=alice, project_id=family["parent"].id, alias="child"),
        title="From the parent",
        markdown="hello child",
        provenance=BRIDGE,
    )
    # It landed in the child's knowledge base and nowhere else.
    assert knowledge_get(project_id=family["child"].id, document_id=summary.id).title == (
        "From the parent"
    )
    for other in ("parent", "grandchild"):
        with pytest.raises(KanbanError):
            knowledge_get(project_id=family[other].id, document_id=summary.id)
    child_titles = [
        doc.title
        for doc in project_knowledge_list(
            target=Target(user=alice, project_id=family["grandchild"].id, alias="parent"),
        ).documents
    ]
    assert "From the parent" in child_titles

    for alias in ("grandchild", "parent"):
        assert (
            outcome(
                lambda a=alias: project_knowledge_list(
                    target=Target(user=alice, project_id=family["parent"].id, alias=a),
                )
            )
            == "unknown_alias"
        )


def test_a_one_sided_declaration_grants_no_knowledge(
    make_project: MakeProject, alice: AbstractUser
) -> None:
    mine, theirs = make_project("mine"), make_project("theirs")
    a_declaration(mine, "theirs", theirs, Grant(knowledge_read=ALL, knowledge_write=ALL))
    for project in (mine, theirs):
        membership_set(user=alice, project=project, role="owner")
    assert (
        outcome(
            lambda: project_knowledge_list(
                target=Target(user=alice, project_id=mine.id, alias="theirs")
            )
        )
        == "relationship_pending"
    )


# --- the current project ---------------------------------------------------------------------


@pytest.fixture
def board(alice: AbstractUser, bob: AbstractUser, charlie: AbstractUser) -> Project:
    """alice owns the board, bob develops on it, charlie is a guest."""
    project = a_project(name="Board", owner=alice, members={bob: "developer", charlie: "guest"})
    seed_documents(project)
    return project


def test_guests_read_the_current_projects_knowledge_and_developers_write_it(
    board: Project, bob: AbstractUser, charlie: AbstractUser
) -> None:
    assert project_knowledge_list(target=Target(user=charlie, project_id=board.id)).total == 2
    assert project_knowledge_get(
        target=Target(user=charlie, project_id=board.id), document_id="secret-1"
    )
    hits = project_knowledge_search(
        target=Target(user=charlie, project_id=board.id), query="shared"
    ).hits
    assert [hit.document_id for hit in hits] == ["notes-1", "secret-1"]
    for write in (
        lambda: project_knowledge_create(
            target=Target(user=charlie, project_id=board.id),
            title="T",
            markdown="m",
            provenance=BRIDGE,
        ),
        lambda: project_knowledge_edit(
            target=Target(user=charlie, project_id=board.id),
            document_id="notes-1",
            title="T",
            provenance=BRIDGE,
        ),
        lambda: project_knowledge_delete(
            target=Target(user=charlie, project_id=board.id),
            document_id="notes-1",
            provenance=BRIDGE,
        ),
    ):
        assert outcome(write) == "forbidden"

    created = project_knowledge_create(
        target=Target(user=bob, project_id=board.id), title="Bob's", markdown="m", provenance=BRIDGE
    )
    assert project_knowledge_delete(
        target=Target(user=bob, project_id=board.id), document_id=created.id, provenance=BRIDGE
    )


def test_a_stranger_cannot_tell_the_project_exists(board: Project) -> None:
    dave = a_user("dave")
    assert (
        outcome(lambda: project_knowledge_list(target=Target(user=dave, project_id=board.id)))
        == "not_found"
    )


def test_writes_record_who_wrote_through_what_and_from_where(
    family: dict[str, Project], alice: AbstractUser
) -> None:
    child_grants_parent(family, Grant(knowledge_write=ALL))
    summary = project_knowledge_create(
        target=Target(user=alice, project_id=family["parent"].id, alias="child"),
        title="Sourced",
        markdown="m",
        provenance=BRIDGE,
    )
    address = Dataset(family["child"].id, "persistentValue").address(
        f"knowledge.document.{summary.id}"
    )
    stored = engine.get_value(address)
    assert stored is not None
    assert stored.source == {
        "user": "alice",
        "userId": alice.pk,
        "via": "bridge",
        "consumerProject": str(family["parent"].id),
        "alias": "child",
        "page": "index.html",
    }


def test_a_stale_revision_conflicts_without_revealing_the_current_document(
    board: Project, bob: AbstractUser
) -> None:
    first = project_knowledge_get(
        target=Target(user=bob, project_id=board.id), document_id="notes-1"
    )
    project_knowledge_edit(
        target=Target(user=bob, project_id=board.id),
        document_id="notes-1",
        markdown="v2",
        provenance=BRIDGE,
    )
    with pytest.raises(KanbanError) as caught:
        project_knowledge_edit(
            target=Target(user=bob, project_id=board.id),
            document_id="notes-1",
            markdown="v3",
            expected_revision=first.revision,
            provenance=BRIDGE,
        )
    assert caught.value.code == "conflict"
    assert caught.value.details == {}


def test_the_access_step_for_one_document_is_decided_by_its_id(
    family: dict[str, Project], alice: AbstractUser
) -> None:
    child_grants_parent(family, Grant(knowledge_read=Rule("prefixes", ("n",))))
    access = access_knowledge(
        target=Target(user=alice, project_id=family["parent"].id, alias="child"),
        op=Op.KNOWLEDGE_READ,
        document_id="notes-1",
    )
    assert access.target_id == family["child"].id
