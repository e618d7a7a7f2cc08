"""Where plugin pages may run: only framed by a board, and optionally on an origin of their own.

A red team opened a plugin page at top level, where the sandbox still lets its script set
``top.location`` to any site: an open redirect and a phishing page on the product's origin.
Browsers say whether a navigation is for a frame (``Sec-Fetch-Dest``), so a top-level load
is refused. ``KANBAN_PLUGIN_ORIGIN`` moves plugin files to a host of their own.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from kanban.access.memberships import membership_set
from kanban.models import PluginFile, Project
from kanban.projects.lifecycle import project_create
from kanban.settings import plugin_origin_from_env
from kanban.web.security import KIT_PATH, KIT_STYLE_PATH, PLUGIN_SANDBOX
from tests.factories import a_user

pytestmark = pytest.mark.django_db

PLUGIN_HTML = b"<!doctype html><script>top.location = 'https://phish.example/'</script>"
PLUGIN_ORIGIN = "http://plugins.testserver:8001"


@pytest.fixture
def board() -> Project:
    project = project_create(name="Board")
    PluginFile.objects.create(
        project=project,
        path="index.html",
        content=PLUGIN_HTML,
        content_type="text/html; charset=utf-8",
        sha256=hashlib.sha256(PLUGIN_HTML).hexdigest(),
        size=len(PLUGIN_HTML),
    )
    return project


@pytest.fixture
def alice(board: Project) -> Client:
    client = Client()
    user = a_user("alice")
    membership_set(user=user, project=board, role="developer")
    client.force_login(user)
    return client


@pytest.fixture
def separate_origin(settings: Any) -> None:
    settings.KANBAN_PLUGIN_ORIGIN = PLUGIN_ORIGIN
    settings.KANBAN_MAIN_HOSTS = ["testserver", ".example.com", "[::1]"]
    settings.ALLOWED_HOSTS = [*settings.KANBAN_MAIN_HOSTS, "plugins.testserver"]


def test_a_plugin_page_loaded_as_the_tabs_page_is_refused(board: Project) -> None:
    response = Client().get(
        f"/plugins/{board.id}/index.html", headers={"Sec-Fetch-Dest": "document"}
    )

    assert response.status_code == 403
    assert PLUGIN_HTML not in response.content
    assert f"/boards/{board.id}/" in response.content.decode()


@pytest.mark.parametrize("destination", ["iframe", "script", "style", "image", None])
def test_a_plugin_page_loaded_in_a_frame_or_as_a_resource_is_served(
    board: Project, destination: str | None
) -> None:
    headers = {"Sec-Fetch-Dest": destination} if destination else {}
    response = Client().get(f"/plugins/{board.id}/index.html", headers=headers)

    assert response.status_code == 200
    assert response.content == PLUGIN_HTML
    assert "frame-ancestors 'self'" in response["Content-Security-Policy"]
    assert response["X-Frame-Options"] == "SAMEORIGIN"


def test_by_default_the_board_frames_its_plugin_from_its_own_origin(
    board: Project, alice: Client
) -> None:
    response = alice.get(f"/boards/{board.id}/")

    assert f'src="/plugins/{board.id}/index.html"' in response.content.decode()
    assert "frame-src 'self';" in response["Content-Security-Policy"]


@pytest.mark.usefixtures("separate_origin")
def test_with_a_plugin_origin_the_board_frames_its_plugin_from_there(
    board: Project, alice: Client
) -> None:
    response = alice.get(f"/boards/{board.id}/")

    html = response.content.decode()
    assert f'src="{PLUGIN_ORIGIN}/plugins/{board.id}/index.html"' in html
    assert f'sandbox="{PLUGIN_SANDBOX}"' in html
    assert f"frame-src 'self' {PLUGIN_ORIGIN};" in response["Content-Security-Policy"]


@pytest.mark.usefixtures("separate_origin")
def test_with_a_plugin_origin_plugin_files_are_served_there_and_only_there(board: Project) -> None:
    path = f"/plugins/{board.id}/index.html"
    on_plugin_host = Client(HTTP_HOST="plugins.testserver:8001").get(
        path, headers={"Sec-Fetch-Dest": "iframe"}
    )
    on_board_host = Client().get(path, headers={"Sec-Fetch-Dest": "iframe"})

    assert on_plugin_host.status_code == 200
    csp = on_plugin_host["Content-Security-Policy"]
    assert csp.startswith(f"sandbox {PLUGIN_SANDBOX};")
    assert f"script-src {PLUGIN_ORIGIN}/plugins/{board.id}/ {PLUGIN_ORIGIN}/static/" in csp
    assert "frame-ancestors testserver:* example.com:* *.example.com:*" in csp
    assert "plugins.testserver" not in csp.split("frame-ancestors")[1]
    assert "X-Frame-Options" not in on_plugin_host
    assert on_board_host.status_code == 404


def test_the_sdk_types_are_served_as_text_not_as_the_video_a_ts_file_usually_is() -> None:
    types = Client().get("/static/bridge/kanban.d.ts")

    assert types.status_code == 200
    assert types["Content-Type"].startswith("text/plain")
    assert "steamHarnessKanban" in b"".join(types.streaming_content).decode()


@pytest.mark.usefixtures("separate_origin")
@pytest.mark.parametrize(
    "path", ["/", "/accounts/login/", "/healthz", "/admin/", "/api/v1/schema/"]
)
def test_the_plugin_host_serves_nothing_but_plugin_and_static_files(
    path: str, alice: Client
) -> None:
    alice.defaults["HTTP_HOST"] = "plugins.testserver:8001"
    assert alice.get(path).status_code == 404
    assert alice.get("/static/bridge/kanban.js").status_code == 200


@pytest.mark.parametrize("plugin_host", [False, True])
def test_the_plugin_kit_is_served_beside_the_sdk_for_any_plugin_page_to_import(
    plugin_host: bool, board: Project, settings: Any, request: pytest.FixtureRequest
) -> None:
    """The built-in plugins import /static/bridge/plugin-kit.js as a module: from a sandboxed
    page (an opaque origin) that is a CORS request, refused without the header, and the
    plugin CSP has to allow it. collectstatic finds it where development serves it from."""
    host = "testserver"
    if plugin_host:
        request.getfixturevalue("separate_origin")
        host = "plugins.testserver:8001"
    client = Client(HTTP_HOST=host)
    kit = client.get(KIT_PATH)
    page = client.get(f"/plugins/{board.id}/index.html", headers={"Sec-Fetch-Dest": "iframe"})

    assert kit.status_code == 200
    assert kit["Content-Type"].startswith("text/javascript")
    assert kit["Access-Control-Allow-Origin"] == "*"
    assert "export function createWriteMode" in b"".join(kit.streaming_content).decode()
    script_src = next(d for d in page["Content-Security-Policy"].split("; ") if "script-src" in d)
    assert f"http://{host}{KIT_PATH}" in script_src.split()
    found = finders.find("bridge/plugin-kit.js")
    assert found == str(
        Path(settings.BASE_DIR) / "bridge_js" / "static" / "bridge" / "plugin-kit.js"
    )


def test_the_plugin_kits_stylesheet_is_served_beside_it_and_only_it_joins_the_plugins_own(
    board: Project,
) -> None:
    """The kit's look (toasts, the announcer, the read-only note) comes with it: a plugin
    page may link /static/bridge/plugin-kit.css, and no other file of ours."""
    client = Client()
    sheet = client.get(KIT_STYLE_PATH)
    page = client.get(f"/plugins/{board.id}/index.html", headers={"Sec-Fetch-Dest": "iframe"})

    assert sheet.status_code == 200
    assert sheet["Content-Type"].startswith("text/css")
    assert ".toast-error .toast-code" in b"".join(sheet.streaming_content).decode()
    style_src = next(d for d in page["Content-Security-Policy"].split("; ") if "style-src" in d)
    own = f"http://testserver/plugins/{board.id}/"
    assert style_src.split()[1:] == [own, f"http://testserver{KIT_STYLE_PATH}", "'unsafe-inline'"]


@pytest.mark.usefixtures("separate_origin")
@pytest.mark.parametrize(
    "host", ["plugins.testserver.:8001", "PLUGINS.testserver", "plugins.testserver:1"]
)
def test_the_plugin_host_however_spelled_and_on_any_port_serves_no_login(
    host: str, alice: Client
) -> None:
    """A name of its own is the plugin host on every port and with a trailing dot: none
    of them may serve the login page and its CSRF cookie, or a plugin could read it."""
    alice.defaults["HTTP_HOST"] = host
    response = alice.get("/accounts/login/")
    assert response.status_code == 404 and "csrftoken" not in response.cookies


def test_a_plugin_origin_on_a_name_the_boards_share_is_told_apart_by_its_port(
    settings: Any, alice: Client
) -> None:
    settings.KANBAN_PLUGIN_ORIGIN = "http://localhost:18505"
    settings.KANBAN_MAIN_HOSTS = ["localhost", "testserver"]
    settings.ALLOWED_HOSTS = ["localhost", "testserver"]
    for host, login in (
        ("localhost:18505", 404),
        ("localhost.:18505", 404),
        ("localhost:8000", 200),
    ):
        alice.defaults["HTTP_HOST"] = host
        assert alice.get("/accounts/login/").status_code == login, host


@pytest.mark.parametrize(
    "raw",
    [
        "ftp://plugins.example.com",
        "https://plugins.example.com/path",
        "plugins.example.com",
        "https://",
    ],
)
def test_a_plugin_origin_must_be_a_bare_origin(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KANBAN_PLUGIN_ORIGIN", raw)
    with pytest.raises(ImproperlyConfigured):
        plugin_origin_from_env("KANBAN_PLUGIN_ORIGIN")


def test_a_plugin_origin_is_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KANBAN_PLUGIN_ORIGIN", "https://Plugins.Example.com/")
    assert plugin_origin_from_env("KANBAN_PLUGIN_ORIGIN") == "https://plugins.example.com"
    monkeypatch.delenv("KANBAN_PLUGIN_ORIGIN")
    assert plugin_origin_from_env("KANBAN_PLUGIN_ORIGIN") == ""


async def post_to_the_application(path: str, host: str) -> int:
    """The status the deployed ASGI application (``kanban.asgi``, before Django) answers."""
    from kanban.asgi import application

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", host.encode()), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8001),
    }
    body = [{"type": "http.request", "body": b"{}", "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if not body:
            await asyncio.Event().wait()  # the client stays until answered
        return body.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await application(scope, receive, send)
    return int(next(m for m in sent if m["type"] == "http.response.start")["status"])


@pytest.mark.usefixtures("separate_origin")
@pytest.mark.django_db(transaction=True)
async def test_the_plugin_host_does_not_serve_mcp_either() -> None:
    """/mcp/ is routed before Django, so the plugin host's rule never saw it: a plugin host
    answered 401 (asking for a token) where every other app route is 404."""
    assert await post_to_the_application("/mcp/", "plugins.testserver:8001") == 404
    assert await post_to_the_application("/mcp/", "PLUGINS.testserver.") == 404
    assert await post_to_the_application("/api/v1/projects/", "plugins.testserver:8001") == 404
    assert await post_to_the_application("/mcp/", "testserver") == 401
