"""The OpenID provider process the single sign-on tests sign in at (provider.mjs, run by node):
``OidcProvider.start()`` waits until it listens and says its issuer; ``stop()`` ends it."""

from __future__ import annotations

import json
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Final

import pytest

SCRIPT: Final = Path(__file__).with_name("provider.mjs")
CLIENT_ID: Final = "kanban"
CLIENT_SECRET: Final = "kanban-secret"
#: The provider's group whose members the tests make staff.
STAFF_GROUP: Final = "kanban-admins"
BUTTON: Final = "Sign in with Acme ID"


class OidcProvider:
    def __init__(
        self,
        process: subprocess.Popen[bytes],
        issuer: str,
        errors: IO[bytes],
    ) -> None:
        self.process = process
        self.issuer = issuer
        self.errors = errors

    @classmethod
    def start(cls, *, clock_skew: int = 0, timeout: float = 20.0) -> OidcProvider:
        node = shutil.which("node")
        if (
            node is None
            or not (SCRIPT.parent.parent.parent / "bridge_js/node_modules/oidc-provider").is_dir()
        ):
            pytest.skip("node and bridge_js's oidc-provider (npm ci) are needed")
        # Kept open as long as the provider runs; what it said is read if it dies.
        errors = tempfile.TemporaryFile()  # noqa: SIM115
        process = subprocess.Popen(
            [node, str(SCRIPT), "--port=0", f"--clock-skew={clock_skew}"],
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        assert process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([process.stdout], [], [], 0.2)
            if ready:
                line = process.stdout.readline()
                if line.startswith(b"{"):
                    return cls(process, json.loads(line)["issuer"], errors)
            if process.poll() is not None:
                break
        process.kill()
        errors.close()
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

    def check_alive(self) -> None:
        """Fails with the provider's exit code if it has gone: a browser sent to it would
        only say that nobody answered."""
        code = self.process.poll()
        if code is not None:
            self.errors.seek(0)
            said = self.errors.read()[-4000:].decode(errors="replace")
            raise RuntimeError(f"the OpenID provider at {self.issuer} exited with {code}:\n{said}")

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
        self.errors.close()
