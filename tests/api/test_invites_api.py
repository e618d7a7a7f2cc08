"""Invite links over REST: alice (owner) makes one and gets its URL once, lists and revokes
them; bob (developer) may not; bad input gets invalid_argument and makes nothing."""

from __future__ import annotations

from typing import Any

from kanban.models import Invite, Project
from tests.api.conftest import People, client_for


def test_alice_makes_a_guest_link_sees_it_listed_without_its_url_and_revokes_it(
    people: People, board: Project
) -> None:
    alice = client_for(people.alice)
    made = alice.post(
        f"/api/v1/projects/{board.id}/invites/", {"role": "guest", "days": 3}, format="json"
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["url"].startswith("http://testserver/invites/")
    assert (body["role"], body["uses"], body["maxUses"], body["createdBy"]) == (
        "guest",
        0,
        1,
        "alice",
    )
    listed = alice.get(f"/api/v1/projects/{board.id}/invites/").json()["invites"]
    assert [invite["id"] for invite in listed] == [body["id"]] and "url" not in listed[0]

    revoked = alice.delete(f"/api/v1/projects/{board.id}/invites/{body['id']}")
    assert revoked.json() == {"revoked": True}
    assert alice.get(f"/api/v1/projects/{board.id}/invites/").json() == {"invites": []}


def test_bob_may_not_and_bad_input_makes_nothing(people: People, board: Project) -> None:
    bob = client_for(people.bob)
    refused = bob.post(f"/api/v1/projects/{board.id}/invites/", {"role": "guest"}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden")
    alice = client_for(people.alice)
    for body in ({"role": "guest", "uses": 0}, {"role": "owner", "days": "7"}, {"days": 1}):
        answer = alice.post(f"/api/v1/projects/{board.id}/invites/", body, format="json")
        assert (answer.status_code, answer.json()["code"]) == (400, "invalid_argument")
    assert not Invite.objects.exists()


def test_alice_sends_the_link_by_email_when_the_server_has_a_mail_server(
    people: People, board: Project, settings: Any, mailoutbox: list[Any]
) -> None:
    alice = client_for(people.alice)
    url = f"/api/v1/projects/{board.id}/invites/"
    settings.KANBAN_EMAIL_ENABLED = False  # production without EMAIL_URL
    off = alice.post(url, {"role": "guest", "email": "dave@example.com"}, format="json").json()
    assert off["emailError"]["code"] == "not_supported" and off["url"] and mailoutbox == []

    settings.KANBAN_EMAIL_ENABLED = True
    made = alice.post(url, {"role": "developer", "email": "dave@example.com"}, format="json")
    assert made.json()["emailed"] == "dave@example.com"
    [mail] = mailoutbox
    assert mail.to == ["dave@example.com"] and mail.subject == "Join Board"
    assert made.json()["url"] in mail.body and "as a developer" in mail.body
    # An address that is none is the request's fault: refused before any link is made.
    links = len(alice.get(url).json()["invites"])
    bad = alice.post(url, {"role": "guest", "email": "not an address"}, format="json")
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_argument"
    assert bad.json()["field"] == "email" and len(alice.get(url).json()["invites"]) == links
