"""The OpenID provider process the single sign-on tests sign in at (provider.mjs, run by node):
``OidcProvider.start()`` waits until it listens and says its issuer; ``stop()`` ends it."""

from __future__ import annotations

import json
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Final

import pytest

SCRIPT: Final = Path(__file__).with_name("provider.mjs")
CLIENT_ID: Final = "kanban"
CLIENT_SECRET: Final = "kanban-secret"
#: The provider's group whose members the tests make staff.
STAFF_GROUP: Final = "kanban-admins"
BUTTON: Final = "Sign in with Acme ID"


class OidcProvider:
    def __init__(self, process: subprocess.Popen[bytes], issuer: str) -> None:
        self.process = process
        self.issuer = issuer

    @classmethod
    def start(cls, *, clock_skew: int = 0, timeout: float = 20.0) -> OidcProvider:
        node = shutil.which("node")
        if (
            node is None
            or not (SCRIPT.parent.parent.parent / "bridge_js/node_modules/oidc-provider").is_dir()
        ):
            pytest.skip("node and bridge_js's oidc-provider (npm ci) are needed")
        process = subprocess.Popen(
            [node, str(SCRIPT), "--port=0", f"--clock-skew={clock_skew}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([process.stdout], [], [], 0.2)
            if ready:
                line = process.stdout.readline()
                if line.startswith(b"{"):
                    return cls(process, json.loads(line)["issuer"])
            if process.poll() is not None:
                break
        process.kill()
        raise RuntimeError("the OpenID provider did not start")

    def env(self, **extra: str) -> dict[str, str]:
        """A worker's settings for signing in at this provider."""
        return {
            "KANBAN_OIDC_ISSUER": self.issuer,
            "KANBAN_OIDC_CLIENT_ID": CLIENT_ID,
            "KANBAN_OIDC_CLIENT_SECRET": CLIENT_SECRET,
            "KANBAN_OIDC_SCOPES": "openid email profile groups",
            "KANBAN_OIDC_STAFF_GROUP": STAFF_GROUP,
            "KANBAN_OIDC_BUTTON": BUTTON,
            **extra,
        }

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
