"""Invite links over REST: alice (owner) makes one and gets its URL once, lists and revokes
them; bob (developer) may not; bad input gets invalid_argument and makes nothing."""

from __future__ import annotations

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
