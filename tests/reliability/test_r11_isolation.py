"""R11: nobody reads or changes what is not theirs. 1,000 cross-user probes of named
configurations and KV are all refused, indistinguishably from missing things, and
session-authenticated writes need the CSRF token. (Websocket Origin checks live in
tests/kanban/bridge/test_origin.py and test_consumer.py.)"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from rest_framework.test import APIClient

from kanban.data.configurations import configuration_create
from kanban.data.kv import Provenance, project_kv_set
from kanban.data.target import Target
from tests.api.conftest import People, client_for

pytestmark = pytest.mark.django_db
CONFIGURATIONS = 40  # x 5 operations x (real id, random id) = 400 probes


def test_a_thousand_cross_user_probes_leak_nothing(people: People, board: Any) -> None:
    alice_ids = [
        configuration_create(user=people.alice, project_id=board.id, name=f"alice {n}").id
        for n in range(CONFIGURATIONS)
    ]
    for n in range(100):
        project_kv_set(
            target=Target(user=people.alice, project_id=board.id),
            key=f"secret:{n}",
            value=n,
            provenance=Provenance(via="api"),
        )
    bob = APIClient()
    bob.force_login(people.bob)  # bob is a developer on the same board
    base = f"/api/v1/projects/{board.id}/configurations/"
    probes = leaks = 0
    shapes = set()
    for real in alice_ids:
        for target in (real, str(uuid.uuid4())):
            for method, path, body in (
                ("get", f"{base}{target}/", None),
                ("patch", f"{base}{target}/", {"name": "mine now"}),
                ("delete", f"{base}{target}/", None),
                ("post", f"{base}{target}/activate/", {}),
                ("post", f"{base}{target}/duplicate/", {}),
            ):
                kwargs: dict[str, Any] = {"format": "json"} if body is not None else {}
                response = getattr(bob, method)(path, body, **kwargs)
                probes += 1
                shapes.add((response.status_code, json.dumps(response.json(), sort_keys=True)))
                leaks += response.status_code < 400
    dave = client_for(people.dave)  # dave belongs to no project
    for n in range(300):
        url = f"/api/v1/projects/{board.id}/kv/secret:{n % 100}"
        response = dave.get(url) if n % 2 else dave.put(url, {"value": 1}, format="json")
        probes += 1
        leaks += response.status_code < 400
        shapes.add((response.status_code, json.dumps(response.json(), sort_keys=True)))
    for n in range(300):
        response = dave.get(f"/api/v1/projects/{uuid.uuid4()}/kv/secret:{n}")
        probes += 1
        leaks += response.status_code < 400
        shapes.add((response.status_code, json.dumps(response.json(), sort_keys=True)))
    print(f"\nR11: {probes} cross-user probes, {leaks} leaks, {len(shapes)} distinct replies")
    assert probes >= 1000 and leaks == 0
    # alice's configurations and another user's random ids answer identically
    assert len({shape for shape in shapes if shape[0] == 404}) == 2  # configuration, project
    alice = client_for(people.alice, token=True)
    assert alice.get(f"{base}{alice_ids[0]}/").json()["name"] == "alice 0"


def test_session_authenticated_writes_need_the_csrf_token(people: People, board: Any) -> None:
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(people.bob)
    kv = f"/api/v1/projects/{board.id}/kv/k"
    configurations = f"/api/v1/projects/{board.id}/configurations/"
    for method, path, body in (
        ("put", kv, {"value": 1}),
        ("delete", kv, None),
        ("post", configurations, {"name": "x"}),
    ):
        response = getattr(browser, method)(path, body, format="json")
        assert response.status_code == 403 and response.json()["code"] == "forbidden", path
    assert browser.get(kv).status_code == 404, "nothing was written"
    browser.get(f"/boards/{board.id}/")  # the board page hands out the CSRF cookie
    token = browser.cookies["csrftoken"].value
    ok = browser.put(kv, {"value": 1}, format="json", HTTP_X_CSRFTOKEN=token)
    assert ok.status_code == 200, "with the token the same write succeeds"
