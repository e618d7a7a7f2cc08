"""Grant rules: what a rule allows, a new relationship's defaults, the rule grammar, and how
a grant is kept in a relationship's columns."""

from __future__ import annotations

from kanban.access.grant_rules import (
    ALL,
    GRANT_COLUMNS,
    NONE,
    Grant,
    Rule,
    check_rule,
    grant_from_columns,
    grant_to_columns,
    legacy_knowledge_rule,
)


def test_a_key_is_allowed_when_it_starts_with_any_prefix() -> None:
    rule = Rule("prefixes", ("stock:", "ab"))

    assert [rule.allows(key) for key in ("stock:1", "stock:", "abc", "ab", "a", "stoc", "xab")] == [
        True,
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    assert Rule("all").allows("anything") and not Rule("none").allows("anything")


def test_a_new_relationship_reads_all_and_grants_nothing_else() -> None:
    assert Grant() == Grant(
        read=Rule("all"),
        write=Rule("none"),
        knowledge_read=Rule("none"),
        knowledge_write=Rule("none"),
        entrypoints=Rule("none"),
    )


def test_the_rule_grammar_names_the_place_of_each_problem() -> None:
    assert check_rule(Rule("all"), label="read") == []
    assert check_rule(Rule("prefixes", ("a", "a", "")), label="write") == [
        (("prefixes", 1), "write.prefixes[1] repeats 'a'"),
        (("prefixes", 2), "write.prefixes[2] must be a non-empty string"),
    ]


def test_a_grant_survives_its_columns() -> None:
    grant = Grant(write=Rule("prefixes", ("stock:",)), entrypoints=ALL, knowledge_read=NONE)
    columns = grant_to_columns(grant)

    assert set(columns) == set(GRANT_COLUMNS)
    assert grant_from_columns(columns) == grant


def test_old_storage_key_spellings_of_knowledge_prefixes_keep_their_meaning() -> None:
    assert legacy_knowledge_rule(Rule("prefixes", ("knowledge.document.kb_",))) == Rule(
        "prefixes", ("kb_",)
    )
    assert legacy_knowledge_rule(Rule("prefixes", ("knowledge.document.",))) == ALL
