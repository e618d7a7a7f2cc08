"""The signature a receiver checks: the README's snippet accepts what a delivery signs and
refuses another secret, another body, and an old timestamp."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from django.conf import settings

from kanban.webhooks.signing import new_secret, signature_header, signature_verify

MARKER = "<!-- webhook-verify:"


def readme_check() -> Any:
    text = (Path(settings.BASE_DIR) / "README.md").read_text(encoding="utf-8")
    found = re.search(re.escape(MARKER) + r"[^\n]*\n```python\n(.*?)```", text, re.DOTALL)
    assert found, "the README's webhook check"
    scope: dict[str, Any] = {}
    exec(compile(found.group(1), "README.md", "exec"), scope)  # noqa: S102 - our own README
    return scope["kanban_signature_ok"]


def test_the_readme_check_accepts_a_delivery_and_refuses_anything_else() -> None:
    check = readme_check()
    secret, body = new_secret(), b'{"event":"card.moved"}'
    now = int(time.time())
    header = signature_header(secret=secret, timestamp=now, body=body)

    assert check(secret, header, body)
    assert not check(new_secret(), header, body)
    assert not check(secret, header, body + b" ")
    assert not check(secret, "v1=abc", body) and not check(secret, "t=x,v1=abc", body)
    old = signature_header(secret=secret, timestamp=now - 3600, body=body)
    assert not check(secret, old, body), "an hour old: a replay"


def test_the_server_side_check_agrees() -> None:
    secret, body, now = new_secret(), b"{}", int(time.time())
    header = signature_header(secret=secret, timestamp=now, body=body)

    assert header.startswith(f"t={now},v1=") and len(header.split("v1=")[1]) == 64
    assert signature_verify(secret=secret, header=header, body=body, now=now)
    assert not signature_verify(secret=secret, header=header, body=body, now=now + 301)
