"""B8: what the SDK adds to a call in headless Chromium, and the SDK's size.

A stand-in host page answers every bridge frame at once over the handshake's MessagePort;
the plugin frame (``sandbox="allow-scripts"``, as on a board) times ``kv.getValue`` against
a raw MessagePort round trip of the same frame to an echoing port of the same host.
"""

from __future__ import annotations

import gzip
import http.server
import threading
from functools import partial
from pathlib import Path
from typing import Any

from bench.stats import Figure, at_most

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "bridge_js" / "dist" / "kanban.js"
PAGES = Path(__file__).resolve().parent / "sdk_pages"
CHROMIUM = "/usr/bin/chromium"
#: The flags the browser tests use (tests/browser/chromium.py), copied: bench never imports
#: pytest-side modules.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


class _Files(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, path: str) -> str:
        if path.split("?")[0] == "/kanban.js":
            return str(SDK)
        return super().translate_path(path)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def sdk_gzip_bytes() -> int:
    return len(gzip.compress(SDK.read_bytes(), compresslevel=9))


def b8(*, rounds: int, calls: int) -> list[Figure]:
    from playwright.sync_api import sync_playwright

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Files, directory=str(PAGES)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
            )
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/host.html")
            page.wait_for_function("window.pluginReady === true", timeout=15000)
            plugin = next(f for f in page.frames if f.name == "plugin")
            plugin.evaluate("(n) => window.bench(n, 2)", max(50, calls // 10))  # warm up
            added: list[float] = plugin.evaluate("([n, r]) => window.bench(n, r)", [calls, rounds])
            browser.close()
    finally:
        httpd.shutdown()
    size = sdk_gzip_bytes()
    return [
        Figure(
            "B8 SDK overhead",
            "kv.getValue round trip minus raw MessagePort round trip, per call",
            "µs",
            at_most(50),
            added,
        ),
        Figure(
            "B8 SDK size",
            "dist/kanban.js gzip -9 (bridge_js/build.mjs: esbuild bundle, terser minify)",
            "B",
            # 3 KB, 64 bytes more since kv.getHistory, 32 since refusal hints, 32 since
            # notify; 3.5 KB + 100 B since kanban.attachments (bridge_js/tests/build.test.mjs).
            at_most(3600),
            [size],
        ),
    ]
