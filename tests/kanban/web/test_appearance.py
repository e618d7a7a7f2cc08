"""How the host pages look, without a browser: one face per person (the Board's own rule),
board colours an owner picks, the colour scheme a person keeps, one date format, and the
dashboard's inbox list served alone for the page to redraw."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from kanban.accounts.preferences import color_scheme_of
from kanban.models import Project
from kanban.projects.appearance import BOARD_COLORS, board_color
from kanban.templatetags.kanban_ui import when_text
from kanban.web.avatars import avatar_hue, avatar_initials
from tests.factories import a_board

pytestmark = pytest.mark.django_db

BOARD_STATE = Path(settings.BASE_DIR) / "bridge_js" / "plugins" / "board" / "board-state.js"
NAMES = ["alice", "Bob.Okafor", "carol_diaz", "dave-99", "e@x.org"]


def client_of(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_host_draws_a_persons_face_with_the_boards_own_rule() -> None:
    source = BOARD_STATE.read_text()
    functions = [
        re.search(rf"export (function {name}\(.*?\n\}})", source, re.DOTALL)
        for name in ("hue", "initials")
    ]
    assert all(functions), "the Board's hue() and initials() moved: keep kanban.web.avatars equal"
    script = "\n".join(found.group(1) for found in functions if found) + (
        f"\nconsole.log(JSON.stringify({{hues: {json.dumps(NAMES)}.map(hue),"
        " initials: ['Alice Martin', 'Ana María López', 'cher'].map(initials)}));"
    )
    board = json.loads(
        subprocess.run(["node", "-e", script], capture_output=True, check=True).stdout
    )
    assert board["hues"] == [avatar_hue(name) for name in NAMES]
    assert board["initials"] == [
        avatar_initials(n) for n in ("Alice Martin", "Ana María López", "cher")
    ]


def test_a_board_has_a_stable_colour_until_an_owner_picks_one(alice: Any, bob: Any) -> None:
    board = a_board(owner=alice, name="Roadmap", members={bob: "developer"})
    assert board_color(board) == board_color(Project.objects.get(pk=board.pk))
    assert (
        f"--board-color: {BOARD_COLORS[board_color(board)]}"
        in client_of(alice).get("/").content.decode()
    )

    refused = client_of(bob).post(f"/boards/{board.id}/color", {"color": "purple"})
    assert refused.status_code == 403
    wrong = client_of(alice).post(f"/boards/{board.id}/color", {"color": "#ff0000"})
    assert wrong.status_code == 400 and "color is one of blue" in wrong.content.decode()
    assert Project.objects.get(pk=board.pk).color == ""

    saved = client_of(alice).post(f"/boards/{board.id}/color", {"color": "purple"})
    assert saved.status_code == 302 and saved["Location"].endswith("?color=saved")
    assert Project.objects.get(pk=board.pk).color == "purple"
    assert "--board-color: #7a5af8" in client_of(bob).get("/").content.decode()


def test_a_person_keeps_their_colour_scheme_and_a_bad_one_changes_nothing(alice: Any) -> None:
    client = client_of(alice)
    assert 'data-theme="system"' in client.get("/").content.decode()
    answer = client.post(
        "/preferences/color-scheme", {"scheme": "dark"}, headers={"Accept": "application/json"}
    )
    assert answer.json() == {"scheme": "dark"}
    assert 'data-theme="dark"' in client.get("/").content.decode()

    refused = client.post(
        "/preferences/color-scheme", {"scheme": "sepia"}, headers={"Accept": "application/json"}
    )
    assert refused.status_code == 400 and refused.json()["code"] == "invalid_argument"
    assert color_scheme_of(user=alice) == "dark"
    # Without JavaScript the form goes back to the page it was sent from, on this site only.
    back = client.post("/preferences/color-scheme", {"scheme": "light", "next": "/archive/"})
    assert back["Location"] == "/archive/"
    away = client.post(
        "/preferences/color-scheme", {"scheme": "light", "next": "https://evil.example/"}
    )
    assert away["Location"] == "/"


def test_the_plugin_is_told_a_chosen_scheme_in_its_address(alice: Any) -> None:
    board = a_board(owner=alice, name="Roadmap")
    client = client_of(alice)
    assert "colorScheme" not in client.get(f"/boards/{board.id}/").content.decode()
    client.post("/preferences/color-scheme", {"scheme": "dark"})
    assert "index.html?colorScheme=dark" in client.get(f"/boards/{board.id}/").content.decode()


def test_dates_read_relative_while_near_and_as_the_locale_writes_them_otherwise() -> None:
    now = timezone.now().replace(hour=15, minute=16)
    said = {
        "just now": now - timedelta(seconds=20),
        "12 minutes ago": now - timedelta(minutes=12),
        "today at 09:30": now.replace(hour=9, minute=30),
        "yesterday at 15:16": now - timedelta(days=1),
        "tomorrow at 15:16": now + timedelta(days=1),
        "in 2 days": now + timedelta(days=2),
        "3 days ago": now - timedelta(days=3),
    }
    for text, moment in said.items():
        assert when_text(moment, now=now) == text
    assert when_text(now.replace(year=2020, month=12, day=4), now=now) == "Dec. 4, 2020, 15:16"


def test_the_inbox_list_is_served_alone_for_the_dashboard_to_redraw(alice: Any, bob: Any) -> None:
    board = a_board(owner=alice, name="Launch plan")
    client_of(alice).post(f"/boards/{board.id}/members/", {"username": "bob", "role": "guest"})
    listed = client_of(bob).get("/inbox/list")
    page = listed.content.decode()
    assert listed.status_code == 200 and "<html" not in page
    assert 'data-testid="offer"' in page and "Launch plan" in page
    assert Client().get("/inbox/list").status_code == 302  # signed out: to the login page
