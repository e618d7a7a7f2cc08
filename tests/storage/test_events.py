"""One way to send an event after commit (storage/events.py), used by storage's changes,
access changes and plugin changes alike."""

from __future__ import annotations

import pytest
from django.db import transaction

from kanban.access.events import ACCESS_CHANGED
from kanban.projects.plugin_events import PLUGIN_CHANGED
from storage.events import CHANGES, Topic

# A real commit is what these tests are about.
pytestmark = pytest.mark.django_db(transaction=True)


def test_an_event_sent_in_a_transaction_is_heard_after_the_outermost_commit() -> None:
    topic: Topic[str] = Topic("test")
    heard: list[str] = []
    remove = topic.listen(heard.append)
    with transaction.atomic():
        with transaction.atomic():
            topic.send_on_commit("moved")
        assert heard == [], "not before the outermost commit"
    assert heard == ["moved"]
    remove()


def test_an_event_sent_in_a_rolled_back_transaction_is_never_heard() -> None:
    topic: Topic[str] = Topic("test")
    heard: list[str] = []
    remove = topic.listen(heard.append)
    with pytest.raises(RuntimeError), transaction.atomic():
        topic.send_on_commit("lost")
        raise RuntimeError("roll back")
    assert heard == []
    remove()


def test_outside_a_transaction_the_event_is_heard_at_once() -> None:
    topic: Topic[str] = Topic("test")
    heard: list[str] = []
    remove = topic.listen(heard.append)
    topic.send_on_commit("committed already")
    assert heard == ["committed already"]
    remove()
    topic.send_on_commit("after removal")
    assert heard == ["committed already"]


def test_a_failing_listener_does_not_keep_the_others_from_hearing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    topic: Topic[int] = Topic("test")
    heard: list[int] = []

    def broken(event: int) -> None:
        raise ValueError(event)

    removes = [topic.listen(broken), topic.listen(heard.append)]
    topic.send_on_commit(7)
    assert heard == [7]
    assert "test listener" in caplog.text
    for remove in removes:
        remove()


def test_every_event_kind_is_a_topic() -> None:
    assert {topic.name for topic in (CHANGES, ACCESS_CHANGED, PLUGIN_CHANGED)} == {
        "storage change",
        "access",
        "plugin",
    }
