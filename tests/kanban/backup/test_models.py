"""Which models a backup carries: every one the app registry knows, unless excluded with a
reason, each after the models its rows refer to."""

from __future__ import annotations

from django.apps import apps

from kanban.backup.models import EXCLUDED, backed_up_models, model_label


def test_every_model_is_backed_up_or_excluded_with_a_reason() -> None:
    carried = {model_label(model) for model in backed_up_models()}
    for model in apps.get_models():
        label = model_label(model)
        assert (label in carried) != (label in EXCLUDED), f"{label}: backed up or excluded?"
    assert all(reason for reason in EXCLUDED.values())


def test_an_exclusion_names_a_model_that_exists() -> None:
    known = {model_label(model) for model in apps.get_models()}
    assert set(EXCLUDED) <= known


def test_what_a_team_holds_is_carried_and_sessions_are_not() -> None:
    carried = {model_label(model) for model in backed_up_models()}
    assert {
        "auth.user",
        "auth.group",
        "kanban.project",
        "kanban.membership",
        "kanban.relationship",
        "kanban.pluginfile",
        "kanban.apitoken",
        "kanban.invite",
        "kanban.notification",
        "kanban.configuration",
        "kanban.membershipoffer",
    } <= carried
    assert "sessions.session" not in carried


def test_people_come_before_what_names_them() -> None:
    order = [model_label(model) for model in backed_up_models()]
    for refers in ("kanban.membership", "kanban.notification", "kanban.apitoken"):
        assert order.index("auth.user") < order.index(refers)
        assert order.index("kanban.project") < order.index(refers)
