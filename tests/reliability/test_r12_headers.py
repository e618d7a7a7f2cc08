"""R12: every page type carries its security headers; production adds HSTS and secure cookie
flags. (The deploy check with zero warnings is tests/test_deploy.py.)"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from django.test import Client

from kanban.models import PluginFile
from kanban.web.security import PLUGIN_SANDBOX
from tests.api.conftest import People

pytestmark = pytest.mark.django_db


@pytest.fixture
def pages(people: People, board: Any) -> dict[str, str]:
    html = b"<!doctype html><script src='/static/bridge/kanban.js'></script>"
    PluginFile.objects.create(
        project=board,
        path="index.html",
        content=html,
        content_type="text/html; charset=utf-8",
        sha256=hashlib.sha256(html).hexdigest(),
        size=len(html),
    )
    return {
        "login": "/accounts/login/",
        "dashboard": "/",
        "board": f"/boards/{board.id}/",
        "plugin": f"/plugins/{board.id}/index.html",
        "api": f"/api/v1/projects/{board.id}/kv/missing",
        "api-docs": "/api/v1/docs/",
        "schema": "/api/v1/schema/",
        "healthz": "/healthz",
        "admin": "/admin/",
        "not-found": "/no/such/page",
    }


def fetch(client: Client, path: str, **extra: Any) -> Any:
    return client.get(path, **extra)


def test_every_page_type_has_csp_nosniff_and_framing_rules(
    people: People, pages: dict[str, str]
) -> None:
    client = Client()
    client.force_login(people.alice)
    report = []
    for name, path in pages.items():
        response = fetch(client, path)
        csp = response.get("Content-Security-Policy", "")
        report.append((name, response.status_code, bool(csp)))
        assert csp, f"{name} has no CSP"
        assert response.get("X-Content-Type-Options") == "nosniff", name
        assert "object-src 'none'" in csp or "default-src 'none'" in csp, name
        if name == "plugin":
            assert csp.startswith(f"sandbox {PLUGIN_SANDBOX};")
            assert "allow-same-origin" not in csp and "allow-top-navigation" not in csp
            assert "connect-src 'none'" in csp and "frame-ancestors 'self'" in csp
            assert response.get("X-Frame-Options") == "SAMEORIGIN"
            # Public files: CORS only lets the sandboxed page see its own errors' text.
            assert response.get("Access-Control-Allow-Origin") == "*"
            assert "Access-Control-Allow-Credentials" not in response
        else:
            assert "frame-ancestors 'none'" in csp, name
            assert response.get("X-Frame-Options") == "DENY", name
        if name == "board":
            assert "frame-src 'self'" in csp and "script-src 'self'" in csp
    print("\nR12 headers:", ", ".join(f"{n} {s}" for n, s, _ in report))


def test_the_board_embeds_the_plugin_sandboxed_without_same_origin(
    people: People, pages: dict[str, str]
) -> None:
    client = Client()
    client.force_login(people.bob)
    html = client.get(pages["board"]).content.decode()
    assert f'sandbox="{PLUGIN_SANDBOX}"' in html
    assert "allow-same-origin" not in html and "allow-top-navigation" not in html


def test_production_sends_hsts_and_secure_cookie_flags(
    people: People, pages: dict[str, str], settings: Any
) -> None:
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    settings.SECURE_HSTS_PRELOAD = True
    settings.SESSION_COOKIE_SECURE = True
    settings.CSRF_COOKIE_SECURE = True
    people.alice.set_password("alice-pw-123!")
    people.alice.save()
    client = Client()
    login = client.get(pages["login"], secure=True)
    assert login["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    csrf = login.cookies["csrftoken"]
    assert csrf["secure"] and csrf["samesite"] == "Lax"
    response = client.post(
        pages["login"],
        {"username": "alice", "password": "alice-pw-123!"},
        secure=True,
    )
    assert response.status_code == 302
    session = response.cookies["sessionid"]
    assert session["secure"] and session["httponly"] and session["samesite"] == "Lax"
